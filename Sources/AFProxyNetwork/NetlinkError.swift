#if canImport(Glibc)
import Glibc
#endif

/// Why the netlink socket could not be opened or used: the call and the system's reason.
package struct NetlinkError: Error, Sendable, CustomStringConvertible {
    package var description: String

    init(_ call: String, errno code: CInt = errno) {
        self.description = "\(call): \(String(cString: strerror(code)))"
    }
}
