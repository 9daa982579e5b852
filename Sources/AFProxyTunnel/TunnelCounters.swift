import AFProxyModel
import Synchronization

/// A tunnel's byte counts and pause: written on the relay's path for every chunk, read by the
/// control server and set by the task's verbs, so atomics rather than a lock.
final class TunnelCounters: Sendable {
    let uploaded = Atomic<Int64>(0)
    let downloaded = Atomic<Int64>(0)
    private let paused = Atomic<Bool>(false)

    var isPaused: Bool { self.paused.load(ordering: .sequentiallyConsistent) }

    func setPaused(_ value: Bool) {
        self.paused.store(value, ordering: .sequentiallyConsistent)
    }

    /// Bytes from the client go to the origin (upload); bytes from upstream to the client (download).
    func add(_ count: Int, from side: TunnelLifecycle.Side) {
        switch side {
        case .client: self.uploaded.add(Int64(count), ordering: .relaxed)
        case .upstream: self.downloaded.add(Int64(count), ordering: .relaxed)
        }
    }
}
