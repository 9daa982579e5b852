import AFProxyModel

/// A rule kind a person edits at runtime: its rules have ids, the control API lists, adds and
/// removes them under `/v1/rules/{kind}` and `afproxyctl rules KIND` does the same from the JSON
/// alone. Conforming is all a kind does for that edge: the rule book lists the kind once, and the
/// endpoint, the command, the state file and the status follow from that list, so a new kind
/// needs no endpoint, message type or command of its own (the recipe is on `RuleBook`).
///
/// The rules' JSON is what the API answers and what afproxyctl shows as columns; `Request` is the
/// JSON object `POST` takes, its keys listed in `requestFields`, because the API names them when
/// a body is not understood and afproxyctl shows them with the kind.
package protocol EditableRuleSet: RuleSet {
    /// Its `id` names it in `DELETE /v1/rules/{kind}/{id}`, and is never given twice.
    associatedtype Rule: Codable & Sendable & Equatable & Identifiable where Rule.ID == Int
    associatedtype Request: Decodable & Sendable

    /// The kind's name in the API path and on afproxyctl's command line: a plural (`holds`).
    static var kind: String { get }
    /// One rule, in messages: `hold rule` (`no hold rule with id 4`).
    static var ruleName: String { get }
    /// The keys of `Request`, in the order a person would write them.
    static var requestFields: [String] { get }

    /// In the order the API lists them.
    var rules: [Rule] { get }
    /// Adds a rule as asked, or says why not (a bad pattern, a missing condition).
    mutating func add(_ request: Request) throws(RuleRequestError) -> Rule
    /// Adds a rule for a caller with `rights`: a kind that reads files for its rules (map-local)
    /// keeps them; the others add as `add(_:)` does.
    mutating func add(_ request: Request, readingAs rights: ReadRights) throws(RuleRequestError) -> Rule
    /// The rule removed, nil when there is none with `id`.
    mutating func remove(id: Int) -> Rule?
}

extension EditableRuleSet {
    package var count: Int { self.rules.count }

    package mutating func add(_ request: Request, readingAs rights: ReadRights) throws(RuleRequestError) -> Rule {
        try self.add(request)
    }
}
