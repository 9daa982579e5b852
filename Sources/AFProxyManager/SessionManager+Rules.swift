import AFProxyModel
import AFProxyRules

/// The rule book as the tasks and the daemon reach it through the manager.
extension SessionManager {
    /// The destination rules each new transfer and tunnel is checked against (a redirect a
    /// download follows keeps its transfer's).
    package var destinationPolicy: DestinationPolicy { self.rules.destinationPolicy }

    /// The hold rules: a new task one of them catches is created suspended (`held`).
    package var holds: HoldBook { self.rules.holds }
}

extension SessionManager {
    /// A reload's security policy (`tls-ca-file`): new TLS connections to origins use it, of
    /// downloads, intercepted requests and `wss://` tunnels alike.
    package func updateSecurityPolicy(_ policy: SecurityPolicy) {
        self.trust.update(policy)
    }
}
