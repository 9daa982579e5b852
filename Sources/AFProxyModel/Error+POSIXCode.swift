import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

extension Error {
    /// The errno under a Foundation file call's error (`CocoaError` wraps a `POSIXError`), for
    /// messages that say what the system said; EIO when it names none.
    package var posixCode: Int32 {
        ((self as? CocoaError)?.underlying as? POSIXError)?.code.rawValue ?? EIO
    }
}
