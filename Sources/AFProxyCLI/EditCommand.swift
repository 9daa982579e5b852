import AFProxyAPI
import ArgumentParser
import FoundationEssentials

/// `afproxyctl edit ID …`: changes a held request before it goes upstream; `resume` sends it.
struct Edit: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Change a held request (method, path, header fields, body) before resume sends it.",
        discussion: """
            Only a request a hold rule stopped before it went upstream can be changed (afproxyctl hold); it stays \
            held: afproxyctl resume ID sends it as edited, afproxyctl respond ID answers it instead. The host, \
            the framing (Content-Length, Transfer-Encoding) and the connection's own fields are the proxy's and \
            cannot be edited. A response held at its head (hold add --response) takes --status, --header, \
            --remove-header and --body (the body makes the edited head and that body the answer in the origin's \
            place). Each change is listed in the task's edits (afproxyctl show ID, HAR). Exit status 1 \
            with the reason when the task is not held (the daemon answers 409), unknown, or the edit is wrong.
            """)

    @ParentCommand var root: AFProxyCtl

    @Argument(help: "The held task.") var id: Int
    @OptionGroup var changes: EditOptions
    @Option(
        help: ArgumentHelp("The new status of a response held at its head (hold add --response).", valueName: "code"))
    var status: Int?
    @Flag(help: "Print the task's JSON.") var json = false

    mutating func validate() throws {
        guard !self.changes.isEmpty || self.status != nil else {
            throw ValidationError("name what to change: --method, --path, --header, --remove-header or --body")
        }
    }

    func run() throws {
        let global = self.root.global
        let task = try Console.decoder().decode(TaskRecord.self, from: Data(global.call("GET", "/v1/tasks/\(self.id)")))
        // A held task with a status is held at its response: the request went already.
        let atResponse = task.heldBy != nil && task.status != nil
        let answer: [UInt8]
        if atResponse || self.status != nil {
            guard atResponse else {
                Console.error("afproxyctl: task \(self.id) is not held at its response: --status edits a held response")
                throw ExitCode(1)
            }
            guard self.changes.method == nil, self.changes.path == nil else {
                Console.error(
                    "afproxyctl: task \(self.id) is held at its response, its request went already: edit --status, --header, --remove-header or --body"
                )
                throw ExitCode(1)
            }
            answer = try global.call(
                "PATCH", "/v1/tasks/\(self.id)/response", body: try self.changes.responseBody(status: self.status))
        } else {
            answer = try global.call("PATCH", "/v1/tasks/\(self.id)/request", body: try self.changes.requestBody())
        }
        let record = try Console.decoder().decode(TaskRecord.self, from: Data(answer))
        if self.json {
            var bytes: [UInt8] = []
            record.writeJSON(to: &bytes)
            return Console.output(String(decoding: bytes, as: UTF8.self))
        }
        Console.output("\(record.id) \(record.state.rawValue) \(record.method) \(record.url)")
        for edit in record.edits { Console.output("  \(edit.side.rawValue): \(edit.change)") }
    }
}
