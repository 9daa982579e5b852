import AFProxyModel
import AFProxyRules
import AFProxyStore
import AFProxyTunnel

/// What a task needs from the daemon, handed to it as one value when it is made, instead of a
/// pointer back to the manager: a task then depends on these and nothing else, and a test can
/// make one from an in-memory transport.
struct TaskContext: Sendable {
    /// Where its transfers and tunnels run.
    let transport: any UpstreamTransport
    /// Where it publishes `suspended`, `resumed`, `held`, `resumed-at-offset`.
    let events: EventBus
    /// What its receive window may grow by, shared by all tasks.
    let budget: BufferBudget
    /// The throttle rules its transports consult and its record shows.
    let throttler: Throttler
    /// Transparent resumes a proxied GET may make (0: none).
    let transparentResumeLimit: Int
    /// The destination rules in force now, read for each new transfer (a reload may change them).
    let destinations: @Sendable () -> DestinationPolicy
    /// Called once, when the task ended: it leaves the registry for the history.
    let completed: @Sendable (any ManagedTask) -> Void
    /// The TLS client side of a `wss://` upgrade's tunnel (the daemon's is swift-nio-ssl's).
    var tunnelTLS: any TunnelTLSMaker = NoTunnelTLS()
    /// What of a request's bodies the record rules keep; nil (one atomic load) with no rule.
    var recordPlan: @Sendable (ProxyRequest) -> RecordPlan? = { _ in nil }
    /// The response hold that catches a request once the origin's head came (nil: none).
    /// The task is asked for its request only when some hold rule is in force.
    var responseHold: @Sendable (HTTPTask) -> Int? = { _ in nil }
    /// Where kept bodies go (nil: no state directory, nothing is kept).
    var bodies: BodyStore?

    /// What a transport of task `id` to `host` needs to throttle its bytes.
    func throttleTicket(task id: Int, host: String) -> ThrottleTicket {
        ThrottleTicket(throttler: self.throttler, task: id, host: host)
    }
}
