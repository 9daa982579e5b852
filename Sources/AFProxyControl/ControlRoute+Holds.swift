/// The hold rules' routes, beside the tasks' (`ControlRoute.parse` hands `/v1/holds…` here).
package enum HoldsRoute: Sendable, Equatable {
    case list
    /// The rule is in the JSON body (`HoldRequestBody`).
    case add
    case remove(Int)
}

extension ControlRoute {
    static func holds(method: String, rest: [String], path: String) -> Result<ControlRoute, Refusal> {
        let notAllowed = Refusal(status: 405, message: "method \(method) not allowed on \(path)")
        switch rest.count {
        case 1:
            switch method {
            case "GET": return .success(.holds(.list))
            case "POST": return .success(.holds(.add))
            default: return .failure(notAllowed)
            }
        case 2:
            guard method == "DELETE" else { return .failure(notAllowed) }
            guard let id = Int(rest[1]), id > 0 else {
                return .failure(
                    Refusal(status: 400, message: "hold rule id must be a positive integer, not \(rest[1].prefix(32))"))
            }
            return .success(.holds(.remove(id)))
        default:
            return .failure(Refusal(status: 404, message: "no such endpoint: \(path)"))
        }
    }
}
