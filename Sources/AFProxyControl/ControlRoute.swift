import AFProxyModel

/// The control API's routes, parsed from method and target with no I/O so they are tested alone.
package enum ControlRoute: Sendable, Equatable {
    package enum Verb: String, Sendable, CaseIterable {
        case suspend
        case resume
        case cancel
    }

    case listTasks(includeHistory: Bool)
    case task(Int)
    case verb(Verb, Int)
    /// `POST /v1/tasks/suspend?all=1` and resume: every live task.
    case verbAll(Verb)
    case events
    /// `GET /v1/live`: what changed, a few times a second (`LiveSnapshot`), for pages and tables.
    case live
    case stats
    /// `GET /v1/status`: version, uptime, the network, the task counts.
    case status
    /// `POST /v1/downloads`: start a download task from the JSON body.
    case startDownload
    /// `GET /v1/pin?host=H&port=P`: the pin of the key a TLS host presents now.
    case pin(host: String, port: Int)
    /// `GET /v1/har[?all=1][&id=N…]`: the tasks as one HAR 1.2 log; ids select (live or history).
    case har(includeHistory: Bool, ids: [Int])
    /// `GET /metrics`: the Prometheus text format, outside /v1 where scrapers look for it.
    case metrics
    /// `GET /v1/web`: the web dashboard's address and token (404 when web-listen is off).
    case web

    /// A route the API does not have, or a request it cannot take: status and message.
    package struct Refusal: Error, Sendable, Equatable {
        package var status: Int
        package var message: String
    }

    package static func parse(method: String, target: String) -> Result<ControlRoute, Refusal> {
        let (path, query) = Self.split(target)
        if path == "/metrics" {
            guard method == "GET" else {
                return .failure(Refusal(status: 405, message: "method \(method) not allowed on \(path)"))
            }
            return .success(.metrics)
        }
        let parts = path.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        guard parts.count >= 2, parts[0] == "v1" else {
            return .failure(Refusal(status: 404, message: "no such endpoint: \(path) (the API lives under /v1)"))
        }
        let all = query["all"].map { $0 == "1" || $0 == "true" } ?? false
        let rest = Array(parts.dropFirst())
        let resource = rest[0]
        guard ["tasks", "events", "live", "stats", "status", "downloads", "pin", "har", "web"].contains(resource),
            rest.count <= (resource == "tasks" ? 3 : 1)
        else {
            return .failure(Refusal(status: 404, message: "no such endpoint: \(path)"))
        }
        let notAllowed = Refusal(status: 405, message: "method \(method) not allowed on \(path)")
        switch rest.count {
        case 1 where resource == "pin":
            guard method == "GET" else { return .failure(notAllowed) }
            guard let host = query["host"].map({ PercentDecoding.decode($0) }), !host.isEmpty, host.utf8.count <= 253,
                host.utf8.allSatisfy({ $0 > 0x20 && $0 != 0x2F && $0 != 0x7F })
            else { return .failure(Refusal(status: 400, message: "GET /v1/pin needs ?host=NAME[&port=N]")) }
            guard let port = Int(query["port"] ?? "443"), (1...65535).contains(port) else {
                return .failure(Refusal(status: 400, message: "port must be from 1 to 65535"))
            }
            return .success(.pin(host: host, port: port))
        case 1 where resource == "downloads":
            guard method == "POST" else { return .failure(notAllowed) }
            return .success(.startDownload)
        case 1:
            guard method == "GET" else { return .failure(notAllowed) }
            switch resource {
            case "events": return .success(.events)
            case "live": return .success(.live)
            case "stats": return .success(.stats)
            case "status": return .success(.status)
            case "har": return Self.ids(inQuery: target).map { .har(includeHistory: all, ids: $0) }
            case "web": return .success(.web)
            default: return .success(.listTasks(includeHistory: all))
            }
        case 2:
            if method == "POST", let verb = Verb(rawValue: rest[1]) {
                guard verb != .cancel else {
                    return .failure(Refusal(status: 400, message: "cancel takes task ids, not all=1"))
                }
                guard all else {
                    return .failure(Refusal(status: 400, message: "POST /v1/tasks/\(verb.rawValue) needs ?all=1"))
                }
                return .success(.verbAll(verb))
            }
            guard method == "GET" else { return .failure(notAllowed) }
            return Self.id(rest[1]).map { .task($0) }
        default:
            guard method == "POST" else { return .failure(notAllowed) }
            guard let verb = Verb(rawValue: rest[2]) else {
                return .failure(Refusal(status: 404, message: "unknown verb \(rest[2]): use suspend, resume or cancel"))
            }
            return Self.id(rest[1]).map { .verb(verb, $0) }
        }
    }

    private static func id(_ text: String) -> Result<Int, Refusal> {
        guard let id = Int(text), id > 0 else {
            return .failure(Refusal(status: 400, message: "task id must be a positive integer, not \(text.prefix(32))"))
        }
        return .success(id)
    }

    /// Every `id=` of the query, repeated or comma-separated (`split` keeps one value a key).
    private static func ids(inQuery target: String) -> Result<[Int], Refusal> {
        let query = target.split(separator: "?", maxSplits: 1).dropFirst().first ?? ""
        var ids: [Int] = []
        for pair in query.split(separator: "&") where pair.hasPrefix("id=") {
            for text in pair.dropFirst(3).split(separator: ",") {
                switch Self.id(String(text)) {
                case .success(let id): ids.append(id)
                case .failure(let refusal): return .failure(refusal)
                }
            }
        }
        return .success(ids)
    }

    private static func split(_ target: String) -> (String, [String: String]) {
        guard let mark = target.firstIndex(of: "?") else { return (target, [:]) }
        var query: [String: String] = [:]
        for pair in target[target.index(after: mark)...].split(separator: "&") {
            let kv = pair.split(separator: "=", maxSplits: 1)
            query[String(kv[0])] = kv.count > 1 ? String(kv[1]) : ""
        }
        return (String(target[..<mark]), query)
    }
}
