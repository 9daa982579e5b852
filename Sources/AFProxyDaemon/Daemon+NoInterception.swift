#if !Interception
import AFProxyControl
import AFProxyListener
import AFProxyManager
import AFProxyRules
import AFProxyTunnel
import Logging

/// A daemon built without the `Interception` trait (`make run`'s quick first build): no TLS stack
/// is linked, every CONNECT is a plain tunnel, and the CA and intercept routes say why (501).
extension Daemon {
    /// What `--version` adds, so that a person (and the quick build's test) can tell the builds apart.
    static let buildNote = " (built without HTTPS interception)"

    static var tunnelTLS: (any TunnelTLSMaker)? { nil }

    static func interception(
        _ rules: LiveRules<InterceptRuleSet>, _ configuration: DaemonConfiguration, _ environment: [String: String],
        logger: Logger
    ) -> (any LocalAuthority, Interception?) {
        let missing = InterceptionNotBuilt()
        if rules.isActive { logger.error("intercept rules are set, but every CONNECT is a plain tunnel: \(missing)") }
        return (missing, nil)
    }
}
#endif
