import AFProxyModel
import FoundationEssentials
import Testing

@Suite struct TaskHistoryTests {
    private func record(_ id: Int) -> TaskRecord {
        TaskRecord(
            id: id, kind: .data, state: .completed, method: "GET", url: "http://h/", client: "c", createdAt: Date())
    }

    @Test func keepsTheNewestRecordsUpToItsCapacityOldestFirst() {
        var history = TaskHistory(capacity: 3)
        for id in 1...7 { history.append(self.record(id)) }
        #expect(history.count == 3)
        #expect(history.records.map(\.id) == [5, 6, 7])
        #expect(history.record(id: 6)?.id == 6)
        #expect(history.record(id: 4) == nil)
    }

    @Test func zeroCapacityKeepsNothing() {
        var history = TaskHistory(capacity: 0)
        history.append(self.record(1))
        #expect(history.records.isEmpty)
    }
}
