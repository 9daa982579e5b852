import AFProxyModel
import AFProxyRules

/// What a task asks of an upstream engine for one HTTP exchange, as one value: the task builds
/// it and the transport turns it into a handle (`HTTPTransfer`), as async-http-client's
/// `HTTPExecutableRequest` is run by whichever executor takes it. The task never learns which
/// engine ran it (curl in the daemon, a recorder in the tests).
package struct TransferRequest: Sendable {
    package var request: ProxyRequest
    package var options: TransferOptions
    /// The destination rules in force when the transfer was made: a reload that changes them
    /// reaches the next transfer, not this one.
    package var destinations: DestinationPolicy
    /// Whose bytes these are for the throttle; nil when the task has no throttler. Part of the
    /// request, not set on the handle afterwards, so the handle never changes once made.
    package var throttle: ThrottleTicket?
    /// The session that should run it (its client's event loop); nil for a transfer no client
    /// connection waits on (a managed download), which any session may take. A transparent
    /// resume or an edit makes its next transfer from this value and so stays on the same one.
    package var affinity: SessionAffinity?

    package init(
        request: ProxyRequest, options: TransferOptions = .proxy, destinations: DestinationPolicy = .open,
        throttle: ThrottleTicket? = nil, affinity: SessionAffinity? = nil
    ) {
        self.request = request
        self.options = options
        self.destinations = destinations
        self.throttle = throttle
        self.affinity = affinity
    }
}
