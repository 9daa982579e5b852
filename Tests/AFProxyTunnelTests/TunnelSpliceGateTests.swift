import AFProxyTunnel
import Testing

/// When a tunnel leaves the NIO relay for splice(2), fed the reads NIO passes on and the
/// outcomes of a switch, with no sockets.
@Suite struct TunnelSpliceGateTests {
    private let kib = 1024

    @Test func smallExchangesNeverSwitchHoweverManyThereAre() {
        var gate = TunnelSpliceGate(allowed: true, bulkBytes: 256 * self.kib)
        for _ in 0..<10_000 {
            #expect(gate.relayed(100, filled: false, from: .client) == .none)
            #expect(gate.relayed(self.kib, filled: false, from: .upstream) == .none)
        }
        #expect(gate.state == .watching)
    }

    @Test func answersThatEachFitOneReadNeverAddUp() {
        // The first read of each answer fills its buffer, the last does not: the run starts over.
        var gate = TunnelSpliceGate(allowed: true, bulkBytes: 256 * self.kib)
        for _ in 0..<1000 {
            #expect(gate.relayed(64 * self.kib, filled: true, from: .upstream) == .none)
            #expect(gate.relayed(36 * self.kib, filled: false, from: .upstream) == .none)
        }
        #expect(gate.state == .watching)
    }

    @Test func aRunOfFullReadsInOneDirectionSwitchesOnce() {
        var gate = TunnelSpliceGate(allowed: true, bulkBytes: 256 * self.kib)
        #expect(gate.relayed(self.kib, filled: false, from: .client) == .none)
        #expect(gate.relayed(128 * self.kib, filled: true, from: .upstream) == .none)
        // The other direction's reads do not end this direction's run.
        #expect(gate.relayed(100, filled: false, from: .client) == .none)
        #expect(gate.relayed(128 * self.kib, filled: true, from: .upstream) == .startSplice)
        #expect(gate.state == .switching)
        #expect(!gate.isWatching)
        // Reads of the batch under way pass through NIO without a second switch.
        #expect(gate.relayed(256 * self.kib, filled: true, from: .upstream) == .none)
        gate.spliceStarted()
        #expect(gate.state == .spliced)
        #expect(gate.relayed(256 * self.kib, filled: true, from: .client) == .none)
    }

    @Test func eachDirectionCountsItsOwnRun() {
        var gate = TunnelSpliceGate(allowed: true, bulkBytes: 256 * self.kib)
        #expect(gate.relayed(200 * self.kib, filled: true, from: .client) == .none)
        #expect(gate.relayed(200 * self.kib, filled: true, from: .upstream) == .none)
        #expect(gate.relayed(56 * self.kib, filled: true, from: .client) == .startSplice)
    }

    @Test func aDeferredSwitchWatchesForANewRun() {
        var gate = TunnelSpliceGate(allowed: true, bulkBytes: 256 * self.kib)
        #expect(gate.relayed(256 * self.kib, filled: true, from: .client) == .startSplice)
        gate.spliceDeferred()
        #expect(gate.state == .watching)
        // The run that asked for the switch is spent: a new one is needed.
        #expect(gate.relayed(128 * self.kib, filled: true, from: .client) == .none)
        #expect(gate.relayed(128 * self.kib, filled: true, from: .client) == .startSplice)
    }

    @Test func anUnavailableSpliceStopsTheWatching() {
        var gate = TunnelSpliceGate(allowed: true, bulkBytes: 256 * self.kib)
        #expect(gate.relayed(256 * self.kib, filled: true, from: .upstream) == .startSplice)
        gate.spliceUnavailable()
        #expect(gate.state == .off)
        #expect(gate.relayed(1 << 30, filled: true, from: .upstream) == .none)
        // A late report of a switch that started is no switch.
        gate.spliceStarted()
        gate.spliceDeferred()
        #expect(gate.state == .off)
    }

    @Test func aTunnelNotAllowedToSpliceNeverAsks() {
        var gate = TunnelSpliceGate(allowed: false)
        #expect(!gate.isWatching)
        #expect(gate.relayed(1 << 30, filled: true, from: .upstream) == .none)
        #expect(gate.state == .off)
    }

    @Test func smallSplicesInARowHandTheTunnelBackAndItWatchesAgain() {
        var gate = self.splicedGate()
        let small = TunnelSpliceGate.smallFill - 1
        for _ in 1..<TunnelSpliceGate.smallFillsToLeave {
            #expect(gate.spliced(small) == .none)
        }
        #expect(gate.spliced(small) == .leaveSplice)
        #expect(gate.state == .leaving)
        // Splices of what the pipes still held on the way back change nothing.
        #expect(gate.spliced(small) == .none)
        #expect(gate.relayed(1 << 30, filled: true, from: .client) == .none)
        gate.spliceLeft()
        #expect(gate.state == .watching)
        #expect(gate.isWatching)
        // A new run is needed for the next switch.
        #expect(gate.relayed(256 * self.kib, filled: true, from: .client) == .startSplice)
    }

    @Test func aLargeSpliceOrAThrottledOneKeepsTheBulkGoing() {
        var gate = self.splicedGate()
        let small = TunnelSpliceGate.smallFill - 1
        for round in 0..<10 {
            for _ in 1..<TunnelSpliceGate.smallFillsToLeave {
                #expect(gate.spliced(small) == .none)
            }
            // One splice the size of bulk starts the count over; so does one a throttle rule sized.
            #expect(gate.spliced(round % 2 == 0 ? TunnelSpliceGate.smallFill : 1, throttled: round % 2 == 1) == .none)
        }
        #expect(gate.state == .spliced)
    }

    @Test func aSpliceLeftWhileNotLeavingIsIgnored() {
        var gate = self.splicedGate()
        gate.spliceLeft()
        #expect(gate.state == .spliced)
        var watching = TunnelSpliceGate(allowed: true)
        #expect(watching.spliced(1) == .none)
        #expect(watching.state == .watching)
    }

    private func splicedGate() -> TunnelSpliceGate {
        var gate = TunnelSpliceGate(allowed: true, bulkBytes: 256 * self.kib)
        _ = gate.relayed(256 * self.kib, filled: true, from: .upstream)
        gate.spliceStarted()
        return gate
    }

    @Test func theDefaultRunIsFarBeyondARequest() {
        #expect(TunnelSpliceGate.bulkBytes >= 256 * self.kib)
        var gate = TunnelSpliceGate(allowed: true)
        #expect(gate.relayed(TunnelSpliceGate.bulkBytes - 1, filled: true, from: .upstream) == .none)
        #expect(gate.relayed(1, filled: true, from: .upstream) == .startSplice)
    }
}
