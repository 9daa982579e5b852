/// Outbound user events by which the connection handler tells `RequestTimeoutHandler`, at the
/// head of the pipeline, where the connection is in its request/response cycle.
enum ConnectionPhase: Sendable {
    /// A request head was parsed: no timer of ours runs until its response ended, however long a
    /// suspended task takes.
    case requestStarted
    /// The response ended and the connection stays open: the idle timer runs again.
    case responseEnded
}
