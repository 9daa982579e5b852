import AFProxyModel
import AFProxyTunnel
import Testing

/// How a tunnel's two directions close, fed events in the orders the sockets can produce them.
@Suite struct TunnelLifecycleTests {
    /// One event and the action the lifecycle answers with.
    private enum Event {
        case inputClosed(TunnelLifecycle.Side)
        case channelClosed(TunnelLifecycle.Side)
        case failed(TunnelLifecycle.Side, String)
        case cancel(TaskFailure)
    }

    private func feed(_ tunnel: inout TunnelLifecycle, _ events: [Event]) -> [TunnelLifecycle.Action] {
        events.map { event in
            switch event {
            case .inputClosed(let side): tunnel.inputClosed(side)
            case .channelClosed(let side): tunnel.channelClosed(side)
            case .failed(let side, let message): tunnel.failed(side, message)
            case .cancel(let failure): tunnel.cancel(failure)
            }
        }
    }

    @Test func aHalfCloseIsPassedOnAndTheTunnelEndsWhenBothChannelsClosed() {
        var tunnel = TunnelLifecycle()
        let actions = self.feed(
            &tunnel,
            [
                .inputClosed(.client), .inputClosed(.client), .inputClosed(.upstream),
                .channelClosed(.upstream), .channelClosed(.client), .channelClosed(.client),
            ])
        #expect(
            actions == [
                .passEndOfInput(to: .upstream), .none, .passEndOfInput(to: .client),
                .close(.client), .finish(TunnelEnd(reason: "client closed")), .none,
            ])
        #expect(tunnel.isFinished)
    }

    @Test func theSideThatClosedFirstIsTheReasonAndNoError() {
        var tunnel = TunnelLifecycle()
        let actions = self.feed(&tunnel, [.channelClosed(.upstream), .inputClosed(.client), .channelClosed(.client)])
        #expect(actions == [.close(.client), .none, .finish(TunnelEnd(reason: "upstream closed"))])
    }

    @Test func aCancelClosesBothAndWinsOverLaterCauses() {
        var tunnel = TunnelLifecycle()
        let actions = self.feed(
            &tunnel,
            [
                .cancel(.canceled()), .failed(.upstream, "Broken pipe"), .channelClosed(.client),
                .channelClosed(.upstream), .cancel(.canceled()),
            ])
        #expect(
            actions == [
                .closeBoth, .closeBoth, .close(.upstream), .finish(TunnelEnd(.canceled())), .none,
            ])
    }

    @Test func failuresAreErrorsAndAClientsOneCountsAsItsCancel() {
        var upstream = TunnelLifecycle()
        #expect(self.feed(&upstream, [.failed(.upstream, "Connection reset by peer")]) == [.closeBoth])
        #expect(upstream.end?.failure == .upstreamBroken("upstream connection failed: Connection reset by peer"))

        var client = TunnelLifecycle()
        #expect(self.feed(&client, [.failed(.client, "Connection reset by peer")]) == [.closeBoth])
        #expect(client.end?.failure == .clientClosed("canceled: client connection failed: Connection reset by peer"))
    }

    @Test func anIdleTunnelClosesBothWithoutAnError() {
        var tunnel = TunnelLifecycle()
        var actions = [tunnel.idle(seconds: 900)]
        actions += self.feed(&tunnel, [.channelClosed(.client), .channelClosed(.upstream)])
        actions.append(tunnel.idle(seconds: 900))
        let reason = "closed after 900 s without a byte either way"
        #expect(actions == [.closeBoth, .close(.upstream), .finish(TunnelEnd(reason: reason)), .none])
    }

    @Test func idleTimerCountsQuietTimeOnlyWhileRunning() {
        let start = ContinuousClock.now
        var timer = TunnelIdleTimer(limit: .seconds(10), now: start)
        func check(_ total: Int64, suspended: Bool = false, at seconds: Int) -> Bool {
            timer.isIdle(total: total, suspended: suspended, now: start + .seconds(seconds))
        }
        #expect(timer.checkInterval == .milliseconds(2500))
        let answers = [
            check(0, at: 0), check(0, at: 9), check(0, at: 10),
            // A byte moved: quiet from then on.
            check(1, at: 11), check(1, at: 20), check(1, at: 21),
            // Suspended: never idle, and the quiet time starts over at the resume.
            check(1, suspended: true, at: 100), check(1, at: 109), check(1, at: 110),
        ]
        #expect(answers == [false, false, true, false, false, true, false, false, true])
        #expect(TunnelIdleTimer(limit: .seconds(900), now: start).checkInterval == .seconds(30))
        #expect(TunnelIdleTimer(limit: .milliseconds(500), now: start).checkInterval == .milliseconds(250))
    }
}
