import Testing

@testable import AFProxyCLI

/// `download --wait` across a restart of the daemon (issue 22): it keeps trying for the window
/// from the first failure, says so once, starts over after a success, and gives up only when the
/// daemon stayed away for the whole window.
@Suite struct ReconnectWindowTests {
    @Test func theFirstFailureIsAnnouncedAndRetried() {
        var window = ReconnectWindow(limit: 15)
        #expect(!window.isWaiting)
        #expect(window.failed(now: 100) == .retry(announce: true))
        #expect(window.isWaiting)
        #expect(window.failed(now: 100.25) == .retry(announce: false))
        #expect(window.failed(now: 114.9) == .retry(announce: false))
    }

    @Test func aDaemonAwayForTheWholeWindowEndsTheWait() {
        var window = ReconnectWindow(limit: 15)
        _ = window.failed(now: 100)
        #expect(window.failed(now: 115) == .giveUp)
        #expect(window.failed(now: 200) == .giveUp)
    }

    @Test func aSuccessStartsTheWindowAgain() {
        var window = ReconnectWindow(limit: 15)
        _ = window.failed(now: 100)
        _ = window.failed(now: 110)
        window.reached()
        #expect(!window.isWaiting)
        // A second restart later in the same wait gets a whole window of its own.
        #expect(window.failed(now: 120) == .retry(announce: true))
        #expect(window.failed(now: 134) == .retry(announce: false))
        #expect(window.failed(now: 135) == .giveUp)
    }
}
