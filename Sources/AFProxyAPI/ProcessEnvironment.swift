#if canImport(Glibc)
import Glibc
#endif

/// The process's environment as a dictionary: the daemon and afproxyctl resolve the same
/// settings (`ControlSocketPath`, `AFPROXY_*`) from it, and take it as a value so tests can pass
/// their own.
package enum ProcessEnvironment {
    package static func current() -> [String: String] {
        var result: [String: String] = [:]
        var pointer = environ
        while let entry = pointer.pointee {
            let text = String(cString: entry)
            if let equals = text.firstIndex(of: "=") {
                result[String(text[..<equals])] = String(text[text.index(after: equals)...])
            }
            pointer += 1
        }
        return result
    }
}
