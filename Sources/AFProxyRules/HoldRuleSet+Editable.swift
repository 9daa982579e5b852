/// The hold kind as a person edits it: `/v1/rules/holds` and `afproxyctl rules holds`, besides
/// `/v1/holds` and `afproxyctl hold`, which came first and stay.
extension HoldRuleSet: EditableRuleSet {
    package static let kind = "holds"
    package static let ruleName = "hold rule"
    package static let requestFields = ["host", "method", "url", "kind", "all", "once"]

    package mutating func add(_ request: HoldRequestBody) throws(RuleRequestError) -> HoldRule {
        do throws(HoldRuleError) {
            return self.add(try request.conditions(), once: request.once ?? false)
        } catch {
            throw RuleRequestError(error.message)
        }
    }
}

/// A hold rule is named by its id in the API and on the command line.
extension HoldRule: Identifiable {}
