import AFProxyAPI
import AFProxyManager
import AFProxyRules
import FoundationEssentials

/// `/v1/rules`: every rule kind a person edits at runtime, one endpoint for all of them, from the
/// rule book's list (`RuleBook.editable`), so a new kind is served with no line here.
///
///     GET    /v1/rules                 the kinds: name, what POST takes, how many rules
///     GET    /v1/rules/{kind}          the kind's rules in order
///     POST   /v1/rules/{kind}          a rule from a JSON object of the keys the kind takes
///     DELETE /v1/rules/{kind}/{id}
///
/// Unlike `/v1/holds`, a body with a key the kind does not take is refused: the fields of
/// `afproxyctl rules KIND --add` are typed by hand, and a misspelt condition left out would make
/// a rule that catches more than was meant.
struct RulesEndpoint: ControlEndpoint {
    enum Route: Sendable, Equatable {
        case kinds
        case kind(String, CollectionRoute<Int>)
    }

    let kinds: [any EditableRules]

    func route(_ request: ControlRequest) -> Result<Route, RouteRefusal> {
        guard request.rest.count > 1 else {
            guard request.method == "GET" else { return .failure(.notAllowed(request.method, on: request.path)) }
            return .success(.kinds)
        }
        let name = request.rest[1]
        guard let kind = self.kind(named: name) else {
            let known = self.kinds.map(\.kind).joined(separator: ", ")
            return .failure(
                RouteRefusal(status: 404, message: "no such rule kind: \(name.prefix(32)) (kinds: \(known))"))
        }
        return CollectionRoute.of(request, depth: 1) { ControlRequest.id($0, of: kind.ruleName) }
            .map { .kind(kind.kind, $0) }
    }

    func answer(_ route: Route, to request: ControlRequest) -> ControlAnswer {
        switch route {
        case .kinds:
            let kinds = self.kinds.map {
                RuleKindSummary(kind: $0.kind, rule: $0.ruleName, fields: $0.requestFields, count: $0.listed.count)
            }
            return .json(.ok, RuleKindList(kinds: kinds))
        case .kind(let name, let route):
            // The route was made from this list, which never changes.
            guard let kind = self.kind(named: name) else { return .error(.notFound, "no such rule kind: \(name)") }
            if route == .add, let unknown = Self.unknownFields(in: request, of: kind) {
                let error = RuleRequestError.unknown(fields: unknown, kind: kind.kind, takes: kind.requestFields)
                return .error(.badRequest, error.message)
            }
            return kind.answer(route, to: request)
        }
    }

    private func kind(named name: String) -> (any EditableRules)? {
        self.kinds.first { $0.kind == name }
    }

    /// The keys of a JSON object body that `kind` does not take; nil when there is none, or when
    /// the body is no JSON object (the kind's decoding then says what it expected).
    private static func unknownFields(in request: ControlRequest, of kind: any EditableRules) -> [String]? {
        let body = Data(request.body.readableBytesView)
        guard let object = try? JSONDecoder().decode([String: AnyValue].self, from: body) else { return nil }
        let unknown = object.keys.filter { !kind.requestFields.contains($0) }
        return unknown.isEmpty ? nil : unknown
    }

    /// Any JSON value, not read: only the keys around it are.
    private struct AnyValue: Decodable {
        init(from decoder: any Decoder) {}
    }
}
