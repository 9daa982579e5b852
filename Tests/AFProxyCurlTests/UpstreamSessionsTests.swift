import AFProxyModel
import AFProxyTransport
import Testing

@testable import AFProxyCurl

/// Sessions per loop: a transfer goes to the session of its client's loop, so that a connection's
/// requests never leave their pair of threads; one without a loop goes to each session in turn.
@Suite struct UpstreamSessionsTests {
    private final class Loop {}

    private func request(affinity: SessionAffinity?) -> TransferRequest {
        TransferRequest(
            request: ProxyRequest(method: "GET", url: "http://origin.test/", headers: [], body: .none, client: "c"),
            affinity: affinity)
    }

    private func session(of handle: any HTTPTransfer) throws -> UpstreamSession {
        try #require(handle as? UpstreamTransfer).session
    }

    @Test func aTransferRunsOnItsLoopsSessionEveryTime() throws {
        let loops = [Loop(), Loop(), Loop()]
        let affinities = loops.map { SessionAffinity(key: ObjectIdentifier($0)) }
        let sessions = UpstreamSessions(affinities: affinities)
        defer { sessions.shutdown() }
        #expect(sessions.sessions.count == 3)
        for _ in 0..<4 {
            for (index, affinity) in affinities.enumerated() {
                let handle = sessions.makeTransfer(self.request(affinity: affinity), delegate: CountingDelegate())
                #expect(try self.session(of: handle) === sessions.sessions[index])
            }
        }
    }

    @Test func aTransferWithoutALoopTakesTheSessionsInTurn() throws {
        let loops = [Loop(), Loop()]
        let sessions = UpstreamSessions(affinities: loops.map { SessionAffinity(key: ObjectIdentifier($0)) })
        defer { sessions.shutdown() }
        let stranger = Loop()
        var taken: [ObjectIdentifier] = []
        for affinity in [nil, SessionAffinity(key: ObjectIdentifier(stranger)), nil, nil] {
            let handle = sessions.makeTransfer(self.request(affinity: affinity), delegate: CountingDelegate())
            taken.append(ObjectIdentifier(try self.session(of: handle)))
        }
        let first = ObjectIdentifier(sessions.sessions[0])
        let second = ObjectIdentifier(sessions.sessions[1])
        #expect(taken == [first, second, first, second])
    }

    @Test func theSessionsShareOneConfigurationAndOneUpstreamProxy() {
        let loops = [Loop(), Loop()]
        let sessions = UpstreamSessions(
            affinities: loops.map { SessionAffinity(key: ObjectIdentifier($0)) },
            configuration: UpstreamConfiguration(connectTimeout: .seconds(3)))
        defer { sessions.shutdown() }
        #expect(sessions.sessions.allSatisfy { $0.liveUpstreamProxy === sessions.liveUpstreamProxy })
        #expect(sessions.sessions.allSatisfy { $0.configuration.connectTimeout == .seconds(3) })
        #expect(sessions.transfersStarted == [0, 0])
    }
}
