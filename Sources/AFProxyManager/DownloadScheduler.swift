import AFProxyModel

/// The slots of `max-active-downloads`: a download that wants to run takes one if one is free,
/// else waits its turn (first come, first served) and shows `queued`. A slot is held while an
/// attempt runs or the file is being finished, and given back between attempts.
final class DownloadScheduler: Sendable {
    private struct Slots {
        var limit: Int
        var active = 0
        var waiting: [DownloadTask] = []
    }

    private let slots: Locked<Slots>

    init(limit: Int) {
        self.slots = Locked(Slots(limit: max(1, limit)))
    }

    /// Grants `task` a slot now (its `slotGranted` is called) or when one frees up.
    func enqueue(_ task: DownloadTask) {
        let granted = self.slots.withLock { slots -> Bool in
            guard slots.active < slots.limit else {
                slots.waiting.append(task)
                return false
            }
            slots.active += 1
            return true
        }
        if granted { task.slotGranted() }
    }

    /// A slot came back: the next waiting task gets it.
    func release() {
        let next = self.slots.withLock { slots -> DownloadTask? in
            slots.active = max(0, slots.active - 1)
            guard slots.active < slots.limit, !slots.waiting.isEmpty else { return nil }
            slots.active += 1
            return slots.waiting.removeFirst()
        }
        next?.slotGranted()
    }

    var active: Int { self.slots.withLock { $0.active } }

    /// The daemon stopped (`SessionManager.releaseLiveTasks`): the waiting tasks are let go.
    func forgetWaiting() -> [DownloadTask] {
        self.slots.withLock { slots in
            defer { slots.waiting.removeAll() }
            return slots.waiting
        }
    }
}
