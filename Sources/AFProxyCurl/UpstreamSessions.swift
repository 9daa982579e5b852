import AFProxyRules
import AFProxyTransport
import Synchronization

/// One upstream session per event loop: each session's thread is paired with one loop, and the
/// transfers of that loop's clients run on it (`TransferRequest.affinity`), so that a request
/// goes back and forth between two threads only, and the session work grows with the loops
/// instead of queueing behind one thread. The sessions share the configuration, the live
/// upstream proxy and the TLS session cache (`TLSSessionCache`); each keeps its own connections, as a connection to an origin is the one
/// thing a curl multi handle cannot safely share across threads (CURL_LOCK_DATA_CONNECT).
package final class UpstreamSessions: Sendable {
    package let sessions: [UpstreamSession]
    /// Which session runs the transfers of each affinity (the loops, in the group's order).
    private let byAffinity: [SessionAffinity: Int]
    /// The next session for a transfer without affinity (a managed download): in turn.
    private let nextFree = Atomic<UInt>(0)

    /// `affinities`: one per session, the loop each pairs with.
    package init(
        affinities: [SessionAffinity], configuration: UpstreamConfiguration = .init(),
        liveUpstreamProxy: LiveUpstreamProxy = .init()
    ) {
        precondition(!affinities.isEmpty, "at least one session")
        let tlsSessions = TLSSessionCache()
        self.sessions = affinities.map { _ in
            UpstreamSession(
                configuration: configuration, liveUpstreamProxy: liveUpstreamProxy, tlsSessions: tlsSessions)
        }
        self.byAffinity = Dictionary(affinities.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
    }

    package var configuration: UpstreamConfiguration { self.sessions[0].configuration }
    package var liveUpstreamProxy: LiveUpstreamProxy { self.sessions[0].liveUpstreamProxy }

    /// Starts every session's thread, named `afproxy-curl-N` after its loop's index.
    package func run() {
        for (index, session) in self.sessions.enumerated() { session.run(name: "afproxy-curl-\(index)") }
    }

    /// Stops every session, canceling what still runs on each.
    package func shutdown() {
        for session in self.sessions { session.shutdown() }
    }

    /// Moves only when every session's loop has turned since: the watchdog then pings only
    /// while none of them is stuck (an idle session turns at least once a second).
    package var iterations: UInt64 {
        self.sessions.lazy.map(\.iterations).min() ?? 0
    }

    /// Transfers each session has started, in the loops' order.
    package var transfersStarted: [UInt64] { self.sessions.map(\.transfersStarted) }

    /// The session for `affinity`: its loop's, or the next in turn.
    package func session(for affinity: SessionAffinity?) -> UpstreamSession {
        if let affinity, let index = self.byAffinity[affinity] { return self.sessions[index] }
        guard self.sessions.count > 1 else { return self.sessions[0] }
        let turn = self.nextFree.add(1, ordering: .relaxed).oldValue
        return self.sessions[Int(turn % UInt(self.sessions.count))]
    }

    package func makeTransfer(_ request: TransferRequest, delegate: any HTTPTransferDelegate) -> any HTTPTransfer {
        self.session(for: request.affinity).makeTransfer(request, delegate: delegate)
    }
}
