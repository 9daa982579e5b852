import NIOCore

/// A control request as the router and an endpoint see it: its line, split once, and for the
/// answer its body (bounded by `ControlBodyLimitHandler`) and the transport that vouched for it.
struct ControlRequest: Sendable {
    var method: String
    /// As sent: the path and the query.
    var target: String
    var path: String
    /// The query's pairs, values still percent-encoded (the endpoints that take text decode it);
    /// a key given twice keeps its last value (`HAREndpoint` reads the repeated `id`). Split by
    /// hand rather than with `URLComponents`, which answers nil for a whole target holding a byte
    /// a URL may not (a space, `|`), where this still finds the path and so the right 4xx.
    var query: [String: String]
    /// The path's segments after `/v1`, the resource's name first; empty outside `/v1`.
    var rest: [String]
    var body: ByteBuffer
    var caller: ControlCaller

    init(method: String, target: String, body: ByteBuffer = ByteBuffer(), caller: ControlCaller) {
        self.method = method
        self.target = target
        self.body = body
        self.caller = caller
        var query: [String: String] = [:]
        if let mark = target.firstIndex(of: "?") {
            self.path = String(target[..<mark])
            for pair in target[target.index(after: mark)...].split(separator: "&") {
                let kv = pair.split(separator: "=", maxSplits: 1)
                query[String(kv[0])] = kv.count > 1 ? String(kv[1]) : ""
            }
        } else {
            self.path = target
        }
        self.query = query
        let parts = self.path.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        self.rest = parts.first == "v1" ? Array(parts.dropFirst()) : []
    }

    /// `?all=1` (or `true`): the history too, or every live task.
    var all: Bool {
        self.query["all"].map { $0 == "1" || $0 == "true" } ?? false
    }

    /// Refuses what a resource with one path and one method does not take: a longer path (404),
    /// another method (405).
    func single(_ method: String) -> RouteRefusal? {
        guard self.rest.count <= 1 else { return .noSuchEndpoint(self.path) }
        guard self.method == method else { return .notAllowed(self.method, on: self.path) }
        return nil
    }

    /// A task id from the path: a positive integer.
    static func id(_ text: String, of what: String = "task") -> Result<Int, RouteRefusal> {
        guard let id = Int(text), id > 0 else {
            return .failure(
                RouteRefusal(status: 400, message: "\(what) id must be a positive integer, not \(text.prefix(32))"))
        }
        return .success(id)
    }
}
