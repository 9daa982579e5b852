import AFProxyModel
import AFProxyRules

extension SessionManager {
    /// The destination rules each new transfer and tunnel is checked against (a redirect a
    /// download follows keeps its transfer's).
    package var destinationPolicy: DestinationPolicy { self.destinations.withLock { $0 } }

    /// At start and on reload.
    package func updateDestinationPolicy(_ policy: DestinationPolicy) {
        self.destinations.withLock { $0 = policy }
    }
}
