import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// A fresh directory under /tmp for one test, removed with everything in it when the test lets
/// go of it: the one way the unit tests make a scratch directory.
package final class TemporaryDirectory: Sendable {
    package let path: String

    /// `label` names the directory (`/tmp/afproxy-LABEL-XXXXXX`), so that one a crashed test left
    /// says which tests made it.
    package init(_ label: String = "test") {
        var template = Array("/tmp/afproxy-\(label)-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        precondition(made != nil, "mkdtemp failed: \(String(cString: strerror(errno)))")
        self.path = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    deinit {
        try? FileManager.default.removeItem(atPath: self.path)
    }

    /// The permission bits of a file in it.
    package func mode(_ name: String) -> mode_t {
        var info = stat()
        precondition(stat(self.path + "/" + name, &info) == 0, "no \(name)")
        return info.st_mode & 0o777
    }

    package func write(_ name: String, _ text: String, mode: mode_t = 0o600) {
        let path = self.path + "/" + name
        _ = FileManager.default.createFile(atPath: path, contents: Data(text.utf8))
        chmod(path, mode)
    }

    package func read(_ name: String) -> String? {
        FileManager.default.contents(atPath: self.path + "/" + name).map { String(decoding: $0, as: UTF8.self) }
    }
}
