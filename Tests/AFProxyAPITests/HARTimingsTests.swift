import AFProxyAPI
import AFProxyModel
import Testing

/// Every way a task's metrics become HAR phases: `time` is always their sum (ssl aside), and the
/// phases that did not happen are -1.
@Suite struct HARTimingsTests {
    private func expectSum(_ timings: HARTimings, _ expected: Double, sourceLocation: SourceLocation = #_sourceLocation)
    {
        #expect(timings.total == expected, sourceLocation: sourceLocation)
        let phases = [timings.blocked, timings.dns, timings.connect, timings.send, timings.wait, timings.receive]
        #expect(abs(phases.filter { $0 >= 0 }.reduce(0, +) - timings.total) < 0.001, sourceLocation: sourceLocation)
        #expect(timings.send >= 0 && timings.wait >= 0 && timings.receive >= 0, sourceLocation: sourceLocation)
    }

    @Test func freshPlainConnection() {
        let metrics = TaskMetrics(dnsMs: 0.2, connectMs: 1.5, ttfbMs: 5.25, totalMs: 12.5, reusedConnection: false)
        let timings = HARTimings(metrics: metrics, endMs: 12.5)
        #expect(
            timings == HARTimings(blocked: -1, dns: 0.2, connect: 1.3, ssl: -1, send: 0, wait: 3.75, receive: 7.25))
        self.expectSum(timings, 12.5)
    }

    @Test func freshTLSConnectionCountsTheHandshakeInConnectAndSSL() {
        let metrics = TaskMetrics(
            dnsMs: 1, connectMs: 3, tlsMs: 10, ttfbMs: 15, totalMs: 20, reusedConnection: false)
        let timings = HARTimings(metrics: metrics, endMs: 20)
        #expect(timings == HARTimings(blocked: -1, dns: 1, connect: 9, ssl: 7, send: 0, wait: 5, receive: 5))
        self.expectSum(timings, 20)
    }

    @Test func reusedConnectionHasNoDNSConnectOrSSL() {
        // curl marks the lookup and connect of a reused connection at the moment it picked it.
        let metrics = TaskMetrics(
            dnsMs: 0.01, connectMs: 0.02, tlsMs: 0.03, ttfbMs: 4, totalMs: 6, reusedConnection: true)
        let timings = HARTimings(metrics: metrics, endMs: 6)
        #expect(timings == HARTimings(blocked: -1, dns: -1, connect: -1, ssl: -1, send: 0, wait: 4, receive: 2))
        self.expectSum(timings, 6)
    }

    @Test func connectionRefusedSpendsItsTimeConnecting() {
        let metrics = TaskMetrics(dnsMs: 0.5, totalMs: 2)
        let timings = HARTimings(metrics: metrics, endMs: 2, failureCode: "connection-refused")
        #expect(timings == HARTimings(blocked: -1, dns: 0.5, connect: 1.5, ssl: -1, send: 0, wait: 0, receive: 0))
        self.expectSum(timings, 2)
    }

    @Test func dnsFailureSpendsItsTimeResolving() {
        let timings = HARTimings(metrics: TaskMetrics(totalMs: 30), endMs: 30, failureCode: "dns-failure")
        #expect(timings == HARTimings(blocked: -1, dns: 30, connect: -1, ssl: -1, send: 0, wait: 0, receive: 0))
    }

    @Test func failedHandshakeIsSSLInsideConnect() {
        let metrics = TaskMetrics(dnsMs: 1, connectMs: 2, totalMs: 7)
        let timings = HARTimings(metrics: metrics, endMs: 7, failureCode: "tls-verify-failed")
        #expect(timings == HARTimings(blocked: -1, dns: 1, connect: 6, ssl: 5, send: 0, wait: 0, receive: 0))
        self.expectSum(timings, 7)
    }

    @Test func noResponseAfterConnectingIsWaiting() {
        let metrics = TaskMetrics(dnsMs: 1, connectMs: 2, totalMs: 5000, reusedConnection: false)
        let timings = HARTimings(metrics: metrics, endMs: 5000, failureCode: "upstream-timeout")
        #expect(timings == HARTimings(blocked: -1, dns: 1, connect: 1, ssl: -1, send: 0, wait: 4998, receive: 0))
        self.expectSum(timings, 5000)
    }

    @Test func liveTaskReceivesUntilNow() {
        let metrics = TaskMetrics(dnsMs: 1, connectMs: 2, ttfbMs: 3, reusedConnection: false)
        let timings = HARTimings(metrics: metrics, endMs: 1000.5)
        #expect(timings == HARTimings(blocked: -1, dns: 1, connect: 1, ssl: -1, send: 0, wait: 1, receive: 997.5))
        self.expectSum(timings, 1000.5)
    }

    @Test func liveTaskWithNothingMeasuredWaits() {
        let timings = HARTimings(metrics: TaskMetrics(), endMs: 250)
        #expect(timings == HARTimings(blocked: -1, dns: -1, connect: -1, ssl: -1, send: 0, wait: 250, receive: 0))
    }

    @Test func queuedTaskIsBlocked() {
        let timings = HARTimings(metrics: TaskMetrics(), endMs: 250, queued: true)
        #expect(timings == HARTimings(blocked: 250, dns: -1, connect: -1, ssl: -1, send: 0, wait: 0, receive: 0))
        self.expectSum(timings, 250)
    }

    @Test func tunnelToAnAddressLiteralHasNoDNS() {
        let metrics = TaskMetrics(connectMs: 0.4, ttfbMs: 2, totalMs: 50, reusedConnection: false)
        let timings = HARTimings(metrics: metrics, endMs: 50)
        #expect(timings == HARTimings(blocked: -1, dns: -1, connect: 0.4, ssl: -1, send: 0, wait: 1.6, receive: 48))
        self.expectSum(timings, 50)
    }

    @Test func completedWithoutATotalEndsAtTheLastMark() {
        let timings = HARTimings(metrics: TaskMetrics(dnsMs: 1, connectMs: 2, ttfbMs: 3), endMs: nil)
        #expect(timings.receive == 0)
        self.expectSum(timings, 3)
    }

    @Test func sumHasNoFloatNoise() {
        let metrics = TaskMetrics(dnsMs: 0.1, connectMs: 0.3, ttfbMs: 0.6, totalMs: 0.7)
        let timings = HARTimings(metrics: metrics, endMs: 0.7)
        #expect(timings.total == 0.7)
    }
}
