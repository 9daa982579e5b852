import AFProxyModel
import AFProxyRules
import AFProxyStore
import FoundationEssentials

/// A rule kind a person edits at runtime (`EditableRuleSet`) with its types erased, as the rule
/// book lists it once (`RuleBook.editable`): the control API's `/v1/rules/{kind}` and the state
/// files come from that list, so a new kind adds no endpoint or line of its own there. The one
/// conformance is the kind's `LiveRules`, so an edit here is the same change, under the same
/// lock and with the same state-file write, as one made by the kind's own code.
package protocol EditableRules: Sendable {
    /// `EditableRuleSet.kind`: `holds`.
    var kind: String { get }
    /// `EditableRuleSet.ruleName`: `hold rule`.
    var ruleName: String { get }
    /// The keys a `POST` body may have.
    var requestFields: [String] { get }
    /// The rules in force, in order.
    var listed: [AnyRule] { get }
    /// Adds a rule from a `POST` body for a caller with `rights`, or says why not; a body that is
    /// not the kind's JSON object is answered with the keys it should have had.
    func add(json: Data, readingAs rights: ReadRights) throws(RuleRequestError) -> AnyRule
    /// The rule removed, nil when there is none with `id`.
    func remove(id: Int) -> AnyRule?
    /// Where the kind's rules survive a restart; nil without a state directory.
    var stateFile: (any AnyStateFile)? { get }
}

extension LiveRules: EditableRules where State.Rules: EditableRuleSet {
    package var kind: String { State.Rules.kind }
    package var ruleName: String { State.Rules.ruleName }
    package var requestFields: [String] { State.Rules.requestFields }
    package var listed: [AnyRule] { self.ruleSet.rules.map(AnyRule.init) }

    package func add(json: Data, readingAs rights: ReadRights) throws(RuleRequestError) -> AnyRule {
        let request: State.Rules.Request
        do {
            request = try JSONDecoder().decode(State.Rules.Request.self, from: json)
        } catch {
            throw .expected(fields: self.requestFields)
        }
        // `change` takes no throwing body: the refusal comes out as a value, made under the lock.
        let added = self.change { rules in
            Result { () throws(RuleRequestError) in try rules.add(request, readingAs: rights) }
        }
        return AnyRule(try added.get())
    }

    package func remove(id: Int) -> AnyRule? {
        self.change { $0.remove(id: id) }.map(AnyRule.init)
    }

    /// The store the rule book gave the kind is a `StateFile` (`RuleBook.editable(_:in:logger:)`).
    package var stateFile: (any AnyStateFile)? { self.store as? any AnyStateFile }
}
