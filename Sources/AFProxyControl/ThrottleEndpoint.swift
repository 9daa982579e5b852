import AFProxyManager
import AFProxyModel
import FoundationEssentials
import NIOCore

/// What the throttle endpoints answer: the rules, the rule set, or why not (status and a JSON body).
enum ThrottleEndpoint {
    static func answer(_ route: ThrottleRoute, body: ByteBuffer, manager: SessionManager) -> (Int, any Encodable) {
        switch route {
        case .list:
            return (200, ThrottleRuleList(rules: manager.throttleRules()))
        case .set(let scope):
            let request: ThrottleSetBody
            do {
                request = try JSONDecoder().decode(ThrottleSetBody.self, from: Data(body.readableBytesView))
            } catch {
                return (400, ControlErrorBody(error: #"expected a JSON object {"down": RATE, "up": RATE}"#))
            }
            guard request.down != nil || request.up != nil else {
                return (400, ControlErrorBody(error: "give a rate for down, up or both"))
            }
            do throws(ByteRateError) {
                let down = try request.down.map { text throws(ByteRateError) in try ByteRate(parsing: text) }
                let up = try request.up.map { text throws(ByteRateError) in try ByteRate(parsing: text) }
                do throws(ThrottleRefusal) {
                    return (200, try manager.setThrottle(scope, down: down, up: up))
                } catch {
                    return (error.status, ControlErrorBody(error: error.message))
                }
            } catch {
                return (400, ControlErrorBody(error: error.message))
            }
        case .remove(let scope, let directions):
            do throws(ThrottleRefusal) {
                try manager.removeThrottle(scope, directions: directions)
                return (200, ThrottleRuleList(rules: manager.throttleRules()))
            } catch {
                return (error.status, ControlErrorBody(error: error.message))
            }
        }
    }
}
