import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// A fresh directory under /tmp, removed when the test is done with it.
final class TemporaryDirectory {
    let path: String

    init() {
        var template = Array("/tmp/afproxy-tls-test-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        precondition(made != nil, "mkdtemp failed")
        self.path = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    deinit {
        try? FileManager.default.removeItem(atPath: self.path)
    }

    func mode(_ name: String) -> mode_t {
        var info = stat()
        precondition(stat(self.path + "/" + name, &info) == 0, "no \(name)")
        return info.st_mode & 0o777
    }

    func write(_ name: String, _ text: String, mode: mode_t = 0o600) {
        let path = self.path + "/" + name
        _ = FileManager.default.createFile(atPath: path, contents: Data(text.utf8))
        chmod(path, mode)
    }

    func read(_ name: String) -> String? {
        FileManager.default.contents(atPath: self.path + "/" + name).map { String(decoding: $0, as: UTF8.self) }
    }
}
