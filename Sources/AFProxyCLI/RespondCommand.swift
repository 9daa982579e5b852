import AFProxyAPI
import ArgumentParser
import FoundationEssentials

/// `afproxyctl respond ID --status N …`: answers a held request in the origin's place.
struct Respond: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Answer a held request from the proxy, without contacting the origin.",
        discussion: """
            The task completes with this answer (its edits say so); the origin never sees the request. A request \
            whose body the client had not sent yet is not read: its connection closes after the answer. Exit \
            status 1 with the reason when the task is not held (409), unknown, or the answer is wrong.
            """)

    @ParentCommand var root: AFProxyCtl

    @Argument(help: "The held task.") var id: Int
    @Option(help: ArgumentHelp("The status (200 to 599).", valueName: "code")) var status: Int
    @Option(
        name: .customLong("header"), help: ArgumentHelp("A field of the answer (repeatable).", valueName: "Name: value")
    )
    var headers: [String] = []
    @Option(help: ArgumentHelp("The body: text, or @FILE (@- for standard input).", valueName: "body"))
    var body: String?

    mutating func validate() throws {
        guard (200...599).contains(self.status) else { throw ValidationError("--status takes 200 to 599") }
        for line in self.headers where HTTPHeaderField(line: line) == nil {
            throw ValidationError("--header takes \"Name: value\" with a token for its name, not \(line)")
        }
    }

    func run() throws {
        let answer = RespondBody(
            status: self.status, headers: self.headers.isEmpty ? nil : self.headers,
            body: try self.body.map { Data(try BodyArgument.bytes($0)).base64EncodedString() })
        let reply = try self.root.global.call(
            "POST", "/v1/tasks/\(self.id)/respond", body: Array(try JSONEncoder().encode(answer)))
        let record = try Console.decoder().decode(TaskRecord.self, from: Data(reply))
        Console.output("\(record.id) answered \(self.status)")
    }
}
