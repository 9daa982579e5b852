/// The hold kind as a person edits it: `/v1/rules/holds` and `afproxyctl rules holds`, besides
/// `/v1/holds` and `afproxyctl hold`, which came first and stay.
extension HoldRuleSet: EditableRuleSet {
    package static let kind = "holds"
    package static let ruleName = "hold rule"
    package static let requestFields = ["host", "method", "url", "kind", "all", "once", "response"]

    package mutating func add(_ request: HoldRequestBody) throws(RuleRequestError) -> HoldRule {
        let conditions: HoldConditions
        do throws(HoldRuleError) {
            conditions = try request.conditions()
        } catch {
            throw RuleRequestError(error.message)
        }
        let response = request.response ?? false
        if response, let kind = conditions.kind, kind != .data, kind != .upload {
            throw RuleRequestError(
                "a response hold stops an HTTP request at its answer: kind \(kind.rawValue) has none to stop")
        }
        return self.add(conditions, once: request.once ?? false, response: response)
    }
}

/// A hold rule is named by its id in the API and on the command line.
extension HoldRule: Identifiable {}
