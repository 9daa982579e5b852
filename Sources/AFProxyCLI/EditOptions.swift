import AFProxyAPI
import ArgumentParser
import FoundationEssentials

/// What `edit` changes in a held request and `replay` in the request it sends again: one set of
/// options, one wire body (`RequestEditBody`).
struct EditOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The new method.", valueName: "method")) var method: String?
    @Option(help: ArgumentHelp("The new path and query (/v1/items?page=2).", valueName: "path")) var path: String?
    @Option(
        name: .customLong("header"),
        help: ArgumentHelp("Set a field, replacing any of that name (repeatable).", valueName: "Name: value"))
    var headers: [String] = []
    @Option(
        name: .customLong("remove-header"), help: ArgumentHelp("Remove a field (repeatable).", valueName: "name"))
    var removeHeaders: [String] = []
    @Option(
        help: ArgumentHelp(
            "The new body: text, or @FILE (@- for standard input), sent whole in place of the request's.",
            valueName: "body"))
    var body: String?

    var isEmpty: Bool {
        self.method == nil && self.path == nil && self.headers.isEmpty && self.removeHeaders.isEmpty && self.body == nil
    }

    func validate() throws {
        for line in self.headers where HTTPHeaderField(line: line) == nil {
            throw ValidationError("--header takes \"Name: value\" with a token for its name, not \(line)")
        }
    }

    /// A response edit as the API takes it (`status`, fields, body).
    func responseBody(status: Int?) throws -> [UInt8] {
        let edit = ResponseEditBody(
            status: status, setHeaders: self.headers.isEmpty ? nil : self.headers,
            removeHeaders: self.removeHeaders.isEmpty ? nil : self.removeHeaders,
            body: try self.body.map { Data(try BodyArgument.bytes($0)).base64EncodedString() })
        return Array(try JSONEncoder().encode(edit))
    }

    /// The edit as the API takes it, the body read (a file that cannot be read exits 1 here).
    func requestBody() throws -> [UInt8] {
        let edit = RequestEditBody(
            method: self.method, path: self.path, setHeaders: self.headers.isEmpty ? nil : self.headers,
            removeHeaders: self.removeHeaders.isEmpty ? nil : self.removeHeaders,
            body: try self.body.map { Data(try BodyArgument.bytes($0)).base64EncodedString() })
        return Array(try JSONEncoder().encode(edit))
    }
}
