/// Why a tunnel ended: `reason` always (the task's `endReason`), `failure` only when it failed
/// or was canceled. A tunnel that either side closed in order did not fail.
package struct TunnelEnd: Sendable, Equatable {
    package var reason: String
    package var failure: TaskFailure?

    package init(reason: String, failure: TaskFailure? = nil) {
        self.reason = reason
        self.failure = failure
    }

    /// A tunnel that ended before it was established, or was canceled: its failure is its reason.
    package init(_ failure: TaskFailure) {
        self.init(reason: failure.message, failure: failure)
    }
}
