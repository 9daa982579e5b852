/// Where a client connection's process arrives once the lookup found it: the lookup runs off the
/// event loop, and a request that arrives first must not wait for it. Every task of the
/// connection holds the slot and reads it each time its record is built; a record completed
/// before the lookup ended asks to hear of it (`whenSettled`) so its history entry gets it too.
package final class ClientProcessSlot: Sendable {
    private struct State {
        var settled = false
        var process: ClientProcess?
        var waiters: [@Sendable (ClientProcess) -> Void] = []
    }

    private let state = Locked(State())

    package init() {}

    /// A slot already settled (a test, a lookup that could not be queued).
    package init(settled process: ClientProcess?) {
        self.state.withLock { state in
            state.settled = true
            state.process = process
        }
    }

    /// What the lookup found; nil while it runs, or when it found nothing.
    package var process: ClientProcess? { self.state.withLock { $0.process } }

    package var isSettled: Bool { self.state.withLock { $0.settled } }

    /// The lookup's answer, once; later calls change nothing. Waiters hear a process only.
    package func settle(_ process: ClientProcess?) {
        let waiters = self.state.withLock { state -> [@Sendable (ClientProcess) -> Void] in
            guard !state.settled else { return [] }
            state.settled = true
            state.process = process
            defer { state.waiters = [] }
            return state.waiters
        }
        guard let process else { return }
        for waiter in waiters { waiter(process) }
    }

    /// Calls `body` with the process when the lookup finds one; at once if it already did. Not
    /// at all when it found none.
    package func whenSettled(_ body: @escaping @Sendable (ClientProcess) -> Void) {
        let found = self.state.withLock { state -> ClientProcess?? in
            guard state.settled else {
                state.waiters.append(body)
                return .none
            }
            return .some(state.process)
        }
        if case .some(.some(let process)) = found { body(process) }
    }
}

extension ClientProcessSlot: Equatable {
    /// The same slot: the same connection's lookup.
    package static func == (lhs: ClientProcessSlot, rhs: ClientProcessSlot) -> Bool { lhs === rhs }
}
