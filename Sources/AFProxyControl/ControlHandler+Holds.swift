import AFProxyModel
import FoundationEssentials
import NIOCore
import NIOHTTP1

/// `GET|POST /v1/holds`, `DELETE /v1/holds/{id}`: the hold rules, added and removed at runtime
/// and kept in the state directory by the session manager's `HoldBook`.
extension ControlHandler {
    func holds(_ route: HoldsRoute, _ head: HTTPRequestHead, _ context: ChannelHandlerContext) {
        switch route {
        case .list:
            self.send(status: .ok, HoldList(holds: self.manager.holds.all), head, context)
        case .add:
            let request: HoldRequestBody
            do {
                request = try JSONDecoder().decode(HoldRequestBody.self, from: Data(self.body.readableBytesView))
            } catch {
                let message =
                    #"expected a JSON object {"host": …, "method": …, "url": …, "kind": …, "all": …, "once": …}"#
                return self.send(status: .badRequest, ControlErrorBody(error: message), head, context)
            }
            do throws(HoldRuleError) {
                let rule = self.manager.holds.add(try request.conditions(), once: request.once ?? false)
                self.send(status: .created, rule, head, context)
            } catch {
                self.send(status: .badRequest, ControlErrorBody(error: error.message), head, context)
            }
        case .remove(let id):
            guard let rule = self.manager.holds.remove(id: id) else {
                return self.send(
                    status: .notFound, ControlErrorBody(error: "no hold rule with id \(id)"), head, context)
            }
            self.send(status: .ok, rule, head, context)
        }
    }
}
