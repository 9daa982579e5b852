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
    /// `POST /v1/downloads`: start a download task from the JSON body.
    case startDownload
    /// `GET /v1/pin?host=H&port=P`: the pin of the key a TLS host presents now.
    case pin(host: String, port: Int)
    /// `GET /metrics`: the Prometheus text format, outside /v1 where scrapers look for it.
    case metrics

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
        guard ["tasks", "events", "stats", "downloads", "pin"].contains(resource),
            rest.count <= (resource == "tasks" ? 3 : 1)
        else {
            return .failure(Refusal(status: 404, message: "no such endpoint: \(path)"))
        }
        let notAllowed = Refusal(status: 405, message: "method \(method) not allowed on \(path)")
        switch rest.count {
        case 1 where resource == "pin":
            guard method == "GET" else { return .failure(notAllowed) }
            guard let host = query["host"].map(Self.percentDecoded), !host.isEmpty, host.utf8.count <= 253,
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
            case "stats": return .success(.stats)
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

    private static func percentDecoded(_ text: String) -> String {
        var bytes: [UInt8] = []
        var index = text.utf8.startIndex
        let utf8 = text.utf8
        while index < utf8.endIndex {
            let next = utf8.index(after: index)
            if utf8[index] == UInt8(ascii: "%"), utf8.distance(from: next, to: utf8.endIndex) >= 2,
                let value = UInt8(
                    String(decoding: utf8[next..<utf8.index(next, offsetBy: 2)], as: UTF8.self), radix: 16)
            {
                bytes.append(value)
                index = utf8.index(next, offsetBy: 2)
            } else {
                bytes.append(utf8[index])
                index = next
            }
        }
        return String(decoding: bytes, as: UTF8.self)
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
