import AFProxyTunnel
import Testing

/// One spliced direction, fed what the splice calls would answer.
@Suite struct SplicePumpTests {
    @Test func aFreshDirectionFillsTheWholePipeThenDrainsWhatItHolds() {
        var pump = SplicePump(capacity: 1000)
        #expect(pump.next(paused: false, throttled: false) == .fill(1000))
        pump.filled(.moved(600))
        #expect(pump.next(paused: false, throttled: false) == .drain(600))
        pump.drained(.moved(600))
        #expect(pump.queued == 0)
        #expect(pump.next(paused: false, throttled: false) == .fill(1000))
    }

    @Test func aSourceWithNothingWaitsForReadability() {
        var pump = SplicePump(capacity: 1000)
        pump.filled(.wouldBlock)
        #expect(pump.next(paused: false, throttled: false) == .wait)
        #expect(pump.wantsReadable)
        #expect(!pump.wantsWritable)
        pump.becameReadable()
        #expect(!pump.wantsReadable)
        #expect(pump.next(paused: false, throttled: false) == .fill(1000))
    }

    @Test func aFullSinkWaitsForWritabilityAndTheSourceFillsOnlyTheRoomLeft() {
        var pump = SplicePump(capacity: 1000)
        pump.filled(.moved(400))
        #expect(pump.next(paused: false, throttled: false) == .drain(400))
        pump.drained(.wouldBlock)
        #expect(pump.wantsWritable)
        #expect(pump.next(paused: false, throttled: false) == .fill(600))
        pump.filled(.moved(600))
        #expect(pump.next(paused: false, throttled: false) == .wait)
        // A full pipe asks for no readability: nothing could be filled.
        #expect(!pump.wantsReadable)
        pump.becameWritable()
        #expect(pump.next(paused: false, throttled: false) == .drain(1000))
    }

    @Test func aPauseStopsFillsButThePipeStillDrains() {
        var pump = SplicePump(capacity: 1000)
        pump.filled(.moved(300))
        #expect(pump.next(paused: true, throttled: false) == .drain(300))
        pump.drained(.moved(300))
        #expect(pump.next(paused: true, throttled: false) == .wait)
        #expect(!pump.wantsReadable)
        #expect(pump.next(paused: false, throttled: false) == .fill(1000))
    }

    @Test func aThrottleBoundsEachFillAndADebtHoldsIt() {
        var pump = SplicePump(capacity: 1000)
        #expect(pump.next(paused: false, throttled: false, grant: 250) == .fill(250))
        #expect(pump.next(paused: false, throttled: false, grant: 5000) == .fill(1000))
        // No tokens left but not in debt: a little, never a fill of 0, which reads as the end.
        #expect(pump.next(paused: false, throttled: false, grant: 0) == .fill(1))
        #expect(pump.next(paused: false, throttled: true, grant: 250) == .wait)
    }

    @Test func theEndOfInputHandsBackOnlyOnceThePipeIsEmpty() {
        var pump = SplicePump(capacity: 1000)
        pump.filled(.moved(700))
        pump.filled(.endOfInput)
        #expect(pump.next(paused: false, throttled: false) == .drain(700))
        pump.drained(.moved(500))
        pump.drained(.wouldBlock)
        #expect(pump.next(paused: false, throttled: false) == .wait)
        #expect(pump.wantsWritable)
        pump.becameWritable()
        #expect(pump.next(paused: false, throttled: false) == .drain(200))
        pump.drained(.moved(200))
        #expect(pump.next(paused: false, throttled: false) == .handBack)
        #expect(pump.next(paused: false, throttled: false) == .done)
    }

    @Test func whatNIOReadAtAHalfCloseWaitsBehindThePipe() {
        var pump = SplicePump(capacity: 1000)
        pump.filled(.moved(100))
        pump.nioTookInput()
        // No fill after NIO read: its bytes are later in the stream than the pipe's.
        #expect(pump.next(paused: false, throttled: false) == .drain(100))
        pump.drained(.moved(100))
        #expect(pump.next(paused: true, throttled: false) == .handBack)
    }

    @Test func aStoppedDirectionDoesNothing() {
        var pump = SplicePump(capacity: 1000)
        pump.filled(.moved(100))
        pump.stop()
        #expect(pump.next(paused: false, throttled: false) == .done)
        #expect(!pump.wantsReadable)
        #expect(!pump.wantsWritable)
    }
}
