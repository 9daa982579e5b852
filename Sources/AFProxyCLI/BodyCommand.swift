import AFProxyAPI
import ArgumentParser
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// `afproxyctl body ID`: a body a record rule kept, byte for byte as it passed (to stdout, or
/// `-o FILE`), with a note on stderr when it was kept cut.
struct Body: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print (or save) a task's recorded response body, or its request body.",
        discussion: """
            Only tasks a record rule named when they started have bodies (afproxyctl record HOST). The bytes \
            are those that passed, content codings included (a gzip-coded body prints as gzip); --decoded \
            undoes gzip, deflate and br for reading (a body kept cut decodes to its start). Exit status 1 with \
            the reason when the task has no such body, or a coding that cannot be decoded.
            """)

    @ParentCommand var root: AFProxyCtl

    @Argument(help: "The task id.") var id: Int
    @Flag(help: "The request body rather than the response body.") var request = false
    @Flag(help: "Undo the body's content codings (gzip, deflate, br) for reading.") var decoded = false
    @Option(name: .short, help: ArgumentHelp("Write the body to FILE (overwritten).", valueName: "file"))
    var output: String?

    func run() throws {
        let side = self.request ? "request" : "response"
        let global = self.root.global
        let bytes = try global.call("GET", "/v1/tasks/\(self.id)/body?side=\(side)\(self.decoded ? "&decoded=1" : "")")
        if let recorded = try? Console.decoder().decode(
            TaskRecord.self, from: Data(global.call("GET", "/v1/tasks/\(self.id)"))),
            let body = recorded.bodies?[self.request ? .request : .response], body.cut
        {
            Console.error(
                "afproxyctl: task \(self.id)'s \(side) body is kept cut: \(body.size) of \(body.seen) bytes "
                    + "(\(body.cutBy ?? "cut"))")
        }
        guard let output = self.output else {
            return Self.writeAll(bytes, to: 1)
        }
        do {
            try Data(bytes).write(to: URL(fileURLWithPath: output))
        } catch {
            Console.error("afproxyctl: cannot write \(output): \(error)")
            throw ExitCode(1)
        }
    }

    /// Raw bytes, NULs included (Console writes text).
    private static func writeAll(_ bytes: [UInt8], to fd: Int32) {
        bytes.withUnsafeBytes { raw in
            var done = 0
            while done < raw.count {
                let wrote = write(fd, raw.baseAddress! + done, raw.count - done)
                if wrote < 0 {
                    if errno == EINTR { continue }
                    Console.error("afproxyctl: cannot write the body: \(String(cString: strerror(errno)))")
                    return
                }
                done += wrote
            }
        }
    }
}
