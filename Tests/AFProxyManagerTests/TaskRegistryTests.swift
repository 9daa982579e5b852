import AFProxyModel
import FoundationEssentials
import Testing

@testable import AFProxyManager

/// The registry as a value behind its lock: ids in order, a task in once and out once, the totals
/// the stats read, and what a previous run left coming back with its ids.
@Suite struct TaskRegistryTests {
    private final class FixedTask: ManagedTask {
        let id: Int
        let kind: TaskKind
        let ending: TaskRecord

        init(id: Int, kind: TaskKind = .data, errorCode: String? = nil, bytes: Int64 = 0) {
            self.id = id
            self.kind = kind
            self.ending = TaskRecord(
                id: id, kind: kind, state: .completed, method: "GET", url: "http://origin.test/\(id)", client: "c",
                createdAt: Date(timeIntervalSince1970: 0), error: errorCode.map { "failed: \($0)" },
                errorCode: errorCode,
                upload: TransferProgress(completed: bytes), download: TransferProgress(completed: 2 * bytes))
        }

        var state: TaskState { .running }
        var bytesUp: Int64 { 0 }
        var bytesDown: Int64 { 0 }
        func record() -> TaskRecord { self.ending }
        func suspend() throws(IllegalTransition) {}
        func resume() throws(IllegalTransition) {}
        func cancel(_ failure: TaskFailure) throws(IllegalTransition) {}
    }

    @Test func idsGoInOrderAndEachTaskLeavesOnceForTheHistory() {
        let registry = TaskRegistry(historyCapacity: 8)
        let first = registry.register(.data) { FixedTask(id: $0, bytes: 10) }
        let second = registry.register(.stream) { FixedTask(id: $0, kind: .stream, errorCode: "upstream-broken") }
        #expect((first.id, second.id) == (1, 2))
        #expect(registry.liveCount == 2)
        #expect(registry.startedByKind().started == [.data: 1, .stream: 1])

        registry.complete(first, record: first.record())
        registry.complete(second, record: second.record())
        #expect(registry.liveCount == 0)
        #expect(registry.find(id: 1).live == nil && registry.find(id: 1).recorded?.id == 1)
        let totals = registry.totals().totals
        #expect((totals.served, totals.failed, totals.canceled, totals.history) == (2, 1, 0, 2))
        #expect((totals.bytesUp, totals.bytesDown) == (10, 20))
        #expect(registry.snapshot(includeHistory: true).history.map(\.id) == [1, 2])
        #expect(registry.snapshot(includeHistory: false).history.isEmpty)
    }

    @Test func restoredTasksKeepTheirIdsAndNewOnesComeAfterTheHighest() {
        let registry = TaskRegistry(historyCapacity: 8)
        registry.restore(live: [FixedTask(id: 7, kind: .download)], finished: [FixedTask(id: 9).record()])
        #expect(registry.find(id: 7).live?.id == 7)
        #expect(registry.find(id: 9).recorded?.id == 9)
        #expect(registry.register(.data) { FixedTask(id: $0) }.id == 10)
        // Restored tasks were started by a previous run: not counted as started by this one.
        #expect(registry.startedByKind().started == [.data: 1])
    }

    @Test func aCompletedRecordCanStillLearnItsClientProcess() {
        let registry = TaskRegistry(historyCapacity: 8)
        let task = registry.register(.data) { FixedTask(id: $0) }
        registry.complete(task, record: task.record())
        registry.updateHistory(id: task.id) { $0.client = "found later" }
        #expect(registry.newestRecord(id: task.id)?.client == "found later")
        #expect(registry.removeAll().isEmpty)
    }
}
