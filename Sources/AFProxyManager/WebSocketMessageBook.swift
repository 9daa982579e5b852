import AFProxyModel
import AFProxyTunnel

/// The message recorders of the latest WebSocket stream tasks a record rule named, live or
/// completed, so that `GET /v1/tasks/{id}/messages` finds them after the task left the registry
/// (its record alone goes to the history). Bounded by `capacity` tasks, the oldest let go
/// first: with each log bounded (`WebSocketMessageLog`: 1000 messages, 16 MiB of payloads),
/// the book holds at most `capacity` times that, whatever the connections carry.
final class WebSocketMessageBook: Sendable {
    static let defaultCapacity = 16

    private struct Entries {
        var recorders: [Int: WebSocketRecorder] = [:]
        var order: [Int] = []
    }

    private let capacity: Int
    private let entries = Locked(Entries())

    init(capacity: Int = WebSocketMessageBook.defaultCapacity) {
        self.capacity = max(1, capacity)
    }

    func add(_ recorder: WebSocketRecorder, task: Int) {
        self.entries.withLock { entries in
            entries.recorders[task] = recorder
            entries.order.append(task)
            while entries.order.count > self.capacity {
                entries.recorders[entries.order.removeFirst()] = nil
            }
        }
    }

    func messages(task: Int) -> WebSocketMessageLog? {
        self.entries.withLock { $0.recorders[task] }?.messages
    }
}
