import ArgumentParser
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// `afproxyctl har`: the tasks as a HAR 1.2 file, for browser developer tools and HAR viewers.
/// The daemon makes the log (`GET /v1/har`); this writes its answer as it came.
struct Har: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Export tasks as one HAR 1.2 log (headers, sizes, timings, and the bodies record rules kept).",
        discussion: """
            Live tasks by default; --all adds the history; task ids select tasks, live or finished. Writes to \
            stdout, or to FILE with -o (an existing FILE is overwritten).
            """)

    @ParentCommand var root: AFProxyCtl
    var global: GlobalOptions { self.root.global }
    @Argument(help: "Task ids (default: every live task).", completion: TaskIDCompletion.kind) var ids: [Int] = []
    @Flag(name: .long, help: "Include completed tasks from the history.") var all = false
    @Flag(
        name: .long,
        help: "Show the values of Authorization, Proxy-Authorization, Cookie and Set-Cookie (else <redacted>).")
    var includeSecrets = false
    @Option(name: .shortAndLong, help: ArgumentHelp("Write the log here, replacing the file.", valueName: "FILE"))
    var output: String?

    func run() throws {
        guard self.ids.isEmpty || !self.all else { throw ValidationError("give task ids or --all, not both") }
        var query = self.ids.map { "id=\($0)" }
        if self.all { query.append("all=1") }
        if self.includeSecrets { query.append("secrets=1") }
        let body = try self.global.call("GET", "/v1/har" + (query.isEmpty ? "" : "?" + query.joined(separator: "&")))
        guard let output = self.output else { return Console.output(String(decoding: body, as: UTF8.self)) }
        do {
            try Data(body).write(to: URL(fileURLWithPath: output))
        } catch {
            Console.error("afproxyctl: cannot write \(output): \(error)")
            throw ExitCode(1)
        }
    }
}
