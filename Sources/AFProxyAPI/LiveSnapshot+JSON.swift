import AFProxyModel
import FoundationEssentials

/// A snapshot written as JSON by hand, its records as `TaskRecord.writeJSON` writes them: the
/// first line of `GET /v1/live` holds every live task, and through `Codable` a thousand of them
/// took several times what `GET /v1/tasks` takes for the same list, which a page waits for before
/// it draws anything. The totals are few and go through `JSONEncoder`.
extension LiveSnapshot {
    package func writeJSON(to out: inout [UInt8]) {
        out.append(contentsOf: #"{"completed":["#.utf8)
        Self.write(self.completed, to: &out)
        out.append(contentsOf: #"],"completedNotShown":"#.utf8)
        out.append(contentsOf: String(self.completedNotShown).utf8)
        out.append(contentsOf: #","event":"#.utf8)
        var event = JSONWriter(out: [])
        event.string(self.event)
        out.append(contentsOf: event.out)
        out.append(contentsOf: #","live":["#.utf8)
        for (index, id) in self.live.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            out.append(contentsOf: String(id).utf8)
        }
        out.append(contentsOf: #"],"stats":"#.utf8)
        out.append(contentsOf: (try? JSONEncoder.api().encode(self.stats)) ?? Data("{}".utf8))
        out.append(contentsOf: #","tasks":["#.utf8)
        Self.write(self.tasks, to: &out)
        out.append(contentsOf: "]}".utf8)
    }

    private static func write(_ records: [TaskRecord], to out: inout [UInt8]) {
        for (index, record) in records.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            record.writeJSON(to: &out)
        }
    }
}
