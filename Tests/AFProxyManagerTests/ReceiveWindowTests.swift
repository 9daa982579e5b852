import AFProxyManager
import Testing

@Suite struct ReceiveWindowTests {
    @Test func startsAtTheMinimumAndGrowsOnlyForAClientThatKeepsUp() {
        var window = ReceiveWindow()
        #expect(window.size == ReceiveWindow.minimum)
        #expect(window.lowWatermark == ReceiveWindow.minimum / 2)
        // Prompt drains before the kernel's send buffer could have filled prove nothing alone.
        #expect(window.afterDrain(paused: .milliseconds(1), written: 1 << 20) == .keep)
        #expect(window.afterDrain(paused: .milliseconds(1), written: 1 << 20, unsent: 1) == .keep)
        // With nothing left unsent in the kernel the window grows to the early maximum, no further.
        var early: [Int] = []
        var probe = window
        while case .grow(let reserve) = probe.afterDrain(paused: .milliseconds(1), written: 1 << 20, unsent: 0) {
            probe.apply(.grow(reserve: reserve))
            early.append(probe.size)
        }
        #expect(early == [16 << 10, 32 << 10, ReceiveWindow.earlyMaximum])
        // Past the kernel's buffers, prompt drains take it on to the maximum.
        #expect(
            probe.afterDrain(paused: .milliseconds(1), written: ReceiveWindow.growAfter)
                == .grow(reserve: ReceiveWindow.earlyMaximum))
        // A slow drain keeps the minimum.
        #expect(window.afterDrain(paused: .milliseconds(500), written: 100 << 20) == .keep)
        var sizes: [Int] = []
        while case .grow(let reserve) = window.afterDrain(paused: .milliseconds(5), written: 100 << 20) {
            window.apply(.grow(reserve: reserve))
            sizes.append(window.size)
        }
        #expect(sizes.first == ReceiveWindow.minimum * 2)
        #expect(sizes.last == ReceiveWindow.maximum)
        #expect(window.reserved == ReceiveWindow.maximum - ReceiveWindow.minimum)
    }

    @Test func aClientThatTurnsSlowGoesBackToTheMinimum() {
        var window = ReceiveWindow()
        window.apply(.grow(reserve: 3 * ReceiveWindow.minimum))
        let change = window.afterDrain(paused: .seconds(2), written: 100 << 20)
        #expect(change == .shrink(release: 3 * ReceiveWindow.minimum))
        window.apply(change)
        #expect(window.size == ReceiveWindow.minimum)
        #expect(window.reserved == 0)
        #expect(window.afterDrain(paused: .seconds(2), written: 100 << 20) == .keep)
    }

    @Test func theBudgetRefusesGrowthPastItsLimitAndTakesReleases() {
        let budget = BufferBudget(limit: 100)
        #expect(budget.reserve(60))
        #expect(!budget.reserve(50))
        #expect(budget.reserve(40))
        #expect(budget.inUse == 100)
        budget.release(60)
        #expect(budget.inUse == 40)
        #expect(budget.reserve(60))
        #expect(!budget.reserve(1))
    }
}
