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
    case stats
    /// `GET /v1/status`: version, uptime, the network, the task counts.
    case status
    /// `POST /v1/downloads`: start a download task from the JSON body.
    case startDownload

    /// A route the API does not have, or a request it cannot take: status and message.
    package struct Refusal: Error, Sendable, Equatable {
        package var status: Int
        package var message: String
    }

    package static func parse(method: String, target: String) -> Result<ControlRoute, Refusal> {
        let (path, query) = Self.split(target)
        let parts = path.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        guard parts.count >= 2, parts[0] == "v1" else {
            return .failure(Refusal(status: 404, message: "no such endpoint: \(path) (the API lives under /v1)"))
        }
        let all = query["all"].map { $0 == "1" || $0 == "true" } ?? false
        let rest = Array(parts.dropFirst())
        let resource = rest[0]
        guard ["tasks", "events", "stats", "status", "downloads"].contains(resource),
            rest.count <= (resource == "tasks" ? 3 : 1)
        else {
            return .failure(Refusal(status: 404, message: "no such endpoint: \(path)"))
        }
        let notAllowed = Refusal(status: 405, message: "method \(method) not allowed on \(path)")
        switch rest.count {
        case 1 where resource == "downloads":
            guard method == "POST" else { return .failure(notAllowed) }
            return .success(.startDownload)
        case 1:
            guard method == "GET" else { return .failure(notAllowed) }
            switch resource {
            case "events": return .success(.events)
            case "stats": return .success(.stats)
            case "status": return .success(.status)
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
