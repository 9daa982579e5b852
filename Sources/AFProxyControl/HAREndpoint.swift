import AFProxyAPI
import AFProxyManager
import AFProxyModel
import FoundationEssentials
import NIOHTTP1

/// `GET /v1/har[?all=1][&id=N…][&secrets=1]`: the tasks as one HAR 1.2 log; ids select, live or
/// history; credentials' values are `<redacted>` unless `secrets=1`.
struct HAREndpoint: ControlEndpoint {
    enum Route: Sendable, Equatable {
        case har(includeHistory: Bool, ids: [Int], secrets: Bool)
    }

    let manager: SessionManager

    func route(_ request: ControlRequest) -> Result<Route, RouteRefusal> {
        if let refusal = request.single("GET") { return .failure(refusal) }
        let secrets = request.query["secrets"].map { $0 == "1" || $0 == "true" } ?? false
        return Self.ids(inQuery: request.target).map { .har(includeHistory: request.all, ids: $0, secrets: secrets) }
    }

    /// Recorded bodies are read from their files.
    func blocks(_ route: Route) -> Bool { true }

    func answer(_ route: Route, to request: ControlRequest) -> ControlAnswer {
        switch route {
        case .har(let includeHistory, let ids, let secrets):
            return self.log(includeHistory: includeHistory, ids: ids, secrets: secrets)
        }
    }

    private func log(includeHistory: Bool, ids: [Int], secrets: Bool) -> ControlAnswer {
        var tasks = ids.isEmpty ? self.manager.tasks(includeHistory: includeHistory) : []
        for id in ids where !tasks.contains(where: { $0.id == id }) {
            guard let record = self.manager.task(id: id) else { return .error(.notFound, "no task with id \(id)") }
            tasks.append(record)
        }
        let store = self.manager.bodies
        let log = HARLog(
            tasks: tasks, now: Date(), reasonPhrase: { HTTPResponseStatus(statusCode: $0).reasonPhrase },
            secrets: secrets,
            body: { id, side in (try? store?.contents(task: id, side: side)).flatMap { $0 }.map { [UInt8]($0) } },
            messages: { self.manager.messages(id: $0) })
        return .json(.ok, HARDocument(log: log))
    }

    /// Every `id=` of the query, repeated or comma-separated (`ControlRequest.query` keeps one
    /// value a key).
    private static func ids(inQuery target: String) -> Result<[Int], RouteRefusal> {
        let query = target.split(separator: "?", maxSplits: 1).dropFirst().first ?? ""
        var ids: [Int] = []
        for pair in query.split(separator: "&") where pair.hasPrefix("id=") {
            for text in pair.dropFirst(3).split(separator: ",") {
                switch ControlRequest.id(String(text)) {
                case .success(let id): ids.append(id)
                case .failure(let refusal): return .failure(refusal)
                }
            }
        }
        return .success(ids)
    }
}
