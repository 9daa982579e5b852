import AFProxyControl
import AFProxyModel
import FoundationEssentials
import Testing

@Suite struct LiveChangesTests {
    func record(_ id: Int, down: Int64 = 0, state: TaskState = .running) -> TaskRecord {
        TaskRecord(
            id: id, kind: .data, state: state, method: "GET", url: "http://h/\(id)", client: "c",
            createdAt: Date(timeIntervalSince1970: 0), download: TransferProgress(completed: down))
    }

    @Test func theFirstSnapshotHasEveryTaskThenOnlyWhatMoved() throws {
        var changes = LiveChanges()
        let firstNext = changes.next(live: [self.record(1), self.record(2)], completions: 0)
        let first = try #require(firstNext)
        #expect(first.tasks.map(\.id) == [1, 2] && first.live == [1, 2])
        changes.sent([self.record(1), self.record(2)])
        let secondNext = changes.next(live: [self.record(1, down: 10), self.record(2)], completions: 0)
        let second = try #require(secondNext)
        #expect(second.tasks.map(\.id) == [1] && second.live == [1, 2])
    }

    @Test func theFirstLineGoesAtOnceEvenWithNoTask() throws {
        var changes = LiveChanges()
        let firstNext = changes.next(live: [], completions: 0)
        let first = try #require(firstNext)
        #expect(first.tasks.isEmpty && first.live.isEmpty)
        changes.sent([])
        #expect(changes.next(live: [], completions: 0) == nil)
    }

    @Test func nothingChangedIsNoLineUntilTheHeartbeat() {
        var changes = LiveChanges(heartbeat: 3)
        let records = [self.record(1)]
        _ = changes.next(live: records, completions: 0)
        changes.sent(records)
        let lines = (0..<3).map { _ in changes.next(live: records, completions: 0) != nil }
        #expect(lines == [false, false, true])
    }

    @Test func aTaskThatWentAwayOrACompletionIsALine() throws {
        var changes = LiveChanges()
        _ = changes.next(live: [self.record(1), self.record(2)], completions: 0)
        changes.sent([self.record(1), self.record(2)])
        let goneNext = changes.next(live: [self.record(2)], completions: 0)
        let gone = try #require(goneNext)
        #expect(gone.tasks.isEmpty && gone.live == [2])
        changes.sent([self.record(2)])
        let completedNext = changes.next(live: [self.record(2)], completions: 1)
        let completed = try #require(completedNext)
        #expect(completed.tasks.isEmpty)
    }

    /// A snapshot that could not be written leaves the base where it was: the next carries the
    /// change too.
    @Test func anUnsentSnapshotIsCarriedIntoTheNext() throws {
        var changes = LiveChanges()
        _ = changes.next(live: [self.record(1)], completions: 0)
        changes.sent([self.record(1)])
        _ = changes.next(live: [self.record(1, down: 5)], completions: 0)
        let secondTry = changes.next(live: [self.record(1, down: 5)], completions: 0)
        let next = try #require(secondTry)
        #expect(next.tasks.map(\.download.completed) == [5])
    }

    @Test func completionsKeepTheNewestAndCountTheRest() {
        var completions = LiveCompletions()
        for id in 1...(LiveCompletions.limit + 7) { completions.append(self.record(id, state: .completed)) }
        #expect(completions.count == LiveCompletions.limit + 7)
        let taken = completions.take()
        #expect(taken.notShown == 7)
        #expect(taken.records.first?.id == 8 && taken.records.last?.id == LiveCompletions.limit + 7)
        let left = completions.count
        #expect(left == 0)
    }
}
