import AFProxyAPI
import ArgumentParser
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// `afproxyctl replay ID [--times N] [edit options]`: a finished request sent again as a new task, through the
/// same rules; waits for each and prints `13 200` (the new task and its status), one a line.
struct Replay: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Send a finished request again as a new task, and print its id and status.",
        discussion: """
            The same method, URL and fields; its body when a record rule kept it whole (afproxyctl record \
            HOST): a request with a body that was not recorded is refused, since without it it would be \
            another request, unless --body gives one. The edit options change what is sent as afproxyctl edit \
            changes a held request (the new task's edits list them). The new task's replayOf names the first. \
            Exit status 1 with the reason when the daemon refuses, or when a replay failed (its error printed).
            """)

    @ParentCommand var root: AFProxyCtl

    @Argument(help: "The task to send again.") var id: Int
    @Option(help: ArgumentHelp("Send it this many times, one after the other.", valueName: "n")) var times = 1
    @Flag(help: "Print each new task's JSON once it completed.") var json = false
    @OptionGroup var changes: EditOptions

    mutating func validate() throws {
        guard (1...1000).contains(self.times) else { throw ValidationError("--times takes 1 to 1000") }
    }

    func run() throws {
        let global = self.root.global
        var failed = false
        let edit = self.changes.isEmpty ? [] : try self.changes.requestBody()
        for _ in 0..<self.times {
            let started = try Console.decoder().decode(
                TaskRecord.self, from: Data(global.call("POST", "/v1/tasks/\(self.id)/replay", body: edit)))
            var record = started
            // A replay has no client to wait on: its record says when it is done.
            while record.state != .completed {
                usleep(50_000)
                record = try Console.decoder().decode(
                    TaskRecord.self, from: Data(global.call("GET", "/v1/tasks/\(started.id)")))
            }
            if self.json {
                var bytes: [UInt8] = []
                record.writeJSON(to: &bytes)
                Console.output(String(decoding: bytes, as: UTF8.self))
            } else {
                Console.output(
                    "\(record.id) \(record.status.map(String.init) ?? "-")"
                        + (record.error.map { " \($0)" } ?? ""))
            }
            failed = failed || record.error != nil
        }
        if failed { throw ExitCode(1) }
    }
}
