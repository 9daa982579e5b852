import AFProxyManager
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

    @Test func aLateFindingReachesTheRecordInTheHistory() {
        var history = TaskHistory(capacity: 3)
        for id in 1...5 {
            history.append(
                TaskRecord(
                    id: id, kind: .data, state: .completed, method: "GET", url: "u", client: "c",
                    createdAt: .init(timeIntervalSince1970: 0)))
        }
        history.update(id: 4) { $0.clientProcess = ClientProcess(pid: 44) }
        history.update(id: 1) { $0.clientProcess = ClientProcess(pid: 11) }  // no longer kept: nothing
        #expect(history.records.map(\.id) == [3, 4, 5])
        #expect(history.records.map { $0.clientProcess?.pid } == [nil, 44, nil])
    }
}
