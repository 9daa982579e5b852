import AFProxyAPI
import AFProxyModel
import FoundationEssentials
import Testing

@Suite struct TaskEventJSONTests {
    @Test(arguments: TaskEvent.Kind.allCases)
    func writesWhatTheEncoderWrites(kind: TaskEvent.Kind) throws {
        let encoder = JSONEncoder.api()
        let record = TaskRecord(
            id: 7, kind: .download, state: .running, method: "GET", url: "http://h/a?q=\"x\"", client: "c",
            createdAt: Date(timeIntervalSince1970: 1_795_000_000), status: 206,
            download: TransferProgress(completed: 1024, total: 4096), requestHeaders: [.init("X-Odd", "a\\b/c")],
            waiting: "retrying in 2 s", heldBy: 3)
        let event = TaskEvent(kind, task: record)
        var out: [UInt8] = []
        event.writeJSON(to: &out)
        #expect(String(decoding: out, as: UTF8.self) == String(decoding: try encoder.encode(event), as: UTF8.self))
        #expect(kind.rawValue.utf8.allSatisfy { (0x61...0x7A).contains($0) || $0 == 0x2D })
    }
}
