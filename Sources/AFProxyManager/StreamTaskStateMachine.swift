import AFProxyModel

/// Everything a stream task (a CONNECT tunnel) decides, as a plain value: `StreamTask` feeds it
/// the verbs and its transport's reports under one lock and performs the actions it answers.
/// How the tunnel's two directions close is its transport's business (`TunnelLifecycle`); this
/// is the task's state, which the verbs and the record see.
///
/// Only real changes produce an action; repeating a verb (suspending a suspended task) is an
/// illegal transition, which is why `suspended` and `resumed` events are published only when the
/// state really changes, as AFNetworking's `af_suspend` / `af_resume` do.
package struct StreamTaskStateMachine: Sendable, Equatable {
    package enum Action: Sendable, Equatable {
        case none
        /// Pause the relay in both directions and publish `suspended`.
        case suspend
        /// Continue the relay where it stopped and publish `resumed`.
        case resume
        /// Close the tunnel with `failure`; its completion follows.
        case abort(TaskFailure)
        /// Record `end`, publish `completed` and move the task to history.
        case finish(TunnelEnd)
        /// Start connecting upstream (`begin`, or the release of a held task).
        case start
        /// A hold rule caught the task: publish `held`; nothing connects until it is released.
        case hold(rule: Int)
        /// A person resumed a held task: publish `resumed`, and connect upstream when `start`
        /// (false when `begin` has not run yet: it starts the task itself then).
        case release(start: Bool)
    }

    package private(set) var state: TaskState
    /// The hold rule that keeps the task from connecting; nil when none caught it, and once
    /// it is released.
    package private(set) var heldBy: Int?
    /// Whether `begin` ran: until then the task is registered but its transport untouched.
    private var begun = false

    package init(state: TaskState = .running) {
        self.state = state
    }

    /// Created suspended by hold rule `rule`: nothing goes upstream until a resume.
    package init(heldBy rule: Int) {
        self.state = .suspended
        self.heldBy = rule
    }

    /// Once the task is registered and `created` published: connect, or wait as held. A task a
    /// person canceled in between does nothing (its abort ended the transport).
    package mutating func begin() -> Action {
        guard !self.begun else { return .none }
        self.begun = true
        if let rule = self.heldBy { return self.state == .suspended ? .hold(rule: rule) : .none }
        switch self.state {
        case .running, .suspended: return .start
        case .canceling, .completed: return .none
        }
    }

    package mutating func suspend() throws(IllegalTransition) -> Action {
        try self.state.apply(.suspend)
        return .suspend
    }

    package mutating func resume() throws(IllegalTransition) -> Action {
        try self.state.apply(.resume)
        guard self.heldBy != nil else { return .resume }
        self.heldBy = nil
        return .release(start: self.begun)
    }

    package mutating func cancel(_ failure: TaskFailure) throws(IllegalTransition) -> Action {
        try self.state.apply(.cancel)
        return .abort(failure)
    }

    /// The client went away before the tunnel was established: it ends, unless it is ending.
    package mutating func clientClosed() -> Action {
        (try? self.cancel(.clientClosed("canceled: client closed the connection"))) ?? .none
    }

    /// The client half-closed before the tunnel was established; `sentBytes`: it sent bytes for
    /// the tunnel behind its CONNECT first.
    ///
    /// A held tunnel whose client half-closed with nothing sent ends as if the client had closed:
    /// a half-close cannot be told from a full close until something is written, and before the
    /// 200 nothing can be (any byte would be the CONNECT's answer). A client that gave up while
    /// held (curl timed out, a browser tab closed, a killed process) sends exactly this, and kept
    /// its task held and a descriptor open until a person acted. The client that only half-closed
    /// loses little: it has nothing more to send, and all it could still receive comes through a
    /// tunnel it cannot use yet, so only a server-speaks-first exchange (a banner) is lost.
    /// A client that sent bytes first and then half-closed (`printf … | nc -N`) meant its request
    /// to go through; it stays held, and the release carries the bytes and the half-close on.
    /// A tunnel that is not held is connecting at once, within the connect timeout: it goes on.
    package mutating func clientHalfClosed(sentBytes: Bool) -> Action {
        guard self.heldBy != nil, !sentBytes else { return .none }
        return self.clientClosed()
    }

    /// The transport reports the end, once; a second report answers `.none` rather than
    /// trapping in a daemon.
    package mutating func complete(_ end: TunnelEnd) -> Action {
        guard self.state != .completed else { return .none }
        self.state = .completed
        return .finish(end)
    }
}
