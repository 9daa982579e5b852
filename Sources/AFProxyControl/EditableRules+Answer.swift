import AFProxyAPI
import AFProxyManager
import AFProxyModel
import AFProxyRules
import FoundationEssentials
import NIOHTTP1

extension EditableRules {
    /// One kind's list, add and remove, as `/v1/rules/{kind}` answers them; `/v1/holds` answers
    /// its add and remove here too, so the two paths cannot drift apart.
    func answer(_ route: CollectionRoute<Int>, to request: ControlRequest) -> ControlAnswer {
        switch route {
        case .list:
            return .json(.ok, RuleList(kind: self.kind, fields: self.requestFields, rules: self.listed))
        case .add:
            do throws(RuleRequestError) {
                return .json(
                    .created,
                    try self.add(json: Data(request.body.readableBytesView), readingAs: request.caller.readRights))
            } catch {
                return .error(.badRequest, error.message)
            }
        case .remove(let id):
            guard let rule = self.remove(id: id) else { return .error(.notFound, "no \(self.ruleName) with id \(id)") }
            return .json(.ok, rule)
        }
    }
}
