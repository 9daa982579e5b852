import AFProxyModel

/// The live tasks by id and the bounded history of those that completed, with the counts the
/// stats and the metrics read: the one registry of the daemon, as AFURLSessionManager's
/// `mutableTaskDelegatesKeyedByTaskIdentifier` is, behind a lock of its own. The session manager
/// and the download service are both handed it; neither reaches into the other for it.
///
/// A task enters once, through `register` (a new id, in order) or `restore` (the id it had in a
/// previous run), and leaves once, through `complete`, for the history.
final class TaskRegistry: Sendable {
    /// The totals of the tasks that completed since start, for `stats`.
    struct Totals {
        var served = 0
        var failed = 0
        var canceled = 0
        var bytesUp: Int64 = 0
        var bytesDown: Int64 = 0
        var history = 0
    }

    private struct State {
        var live: [Int: any ManagedTask] = [:]
        var history: TaskHistory
        var nextID = 1
        var totals = Totals()
        /// Tasks started since start, by kind, for the metrics (`startedByKind`): counted here,
        /// under the lock already taken, because a `created` subscriber would build a record per
        /// request.
        var started: [TaskKind: Int] = [:]
    }

    private let state: Locked<State>

    init(historyCapacity: Int) {
        self.state = Locked(State(history: TaskHistory(capacity: historyCapacity)))
    }

    /// `make` builds the task with the next id, under the registry's lock, so that ids are handed
    /// out in order and a task is live (and counted as started) before anything can ask for it.
    func register<NewTask: ManagedTask>(_ kind: TaskKind, _ make: (Int) -> NewTask) -> NewTask {
        self.state.withLock { state in
            let task = make(state.nextID)
            state.nextID += 1
            state.live[task.id] = task
            state.started[kind, default: 0] += 1
            return task
        }
    }

    /// What a previous run left (its journal's downloads): the unfinished ones live with the ids
    /// they had, the finished ones into the history. New ids continue after the highest.
    func restore(live: [any ManagedTask], finished: [TaskRecord]) {
        self.state.withLock { state in
            for record in finished {
                state.nextID = max(state.nextID, record.id + 1)
                state.history.append(record)
            }
            for task in live {
                state.nextID = max(state.nextID, task.id + 1)
                state.live[task.id] = task
            }
        }
    }

    /// The task ended with `record`: it leaves the live tasks for the history.
    func complete(_ task: any ManagedTask, record: TaskRecord) {
        self.state.withLock { state in
            state.live.removeValue(forKey: task.id)
            state.history.append(record)
            state.totals.served += 1
            if record.isFailure { state.totals.failed += 1 }
            if record.isCancellation { state.totals.canceled += 1 }
            state.totals.bytesUp += record.upload.completed
            state.totals.bytesDown += record.download.completed
        }
    }

    /// A completed task's record changed after its completion (its client process was found).
    func updateHistory(id: Int, _ change: (inout TaskRecord) -> Void) {
        self.state.withLock { $0.history.update(id: id, change) }
    }

    /// The live task with `id`, or the record of the completed one.
    func find(id: Int) -> (live: (any ManagedTask)?, recorded: TaskRecord?) {
        self.state.withLock { ($0.live[id], $0.history.record(id: id)) }
    }

    func isLive(id: Int) -> Bool {
        self.state.withLock { $0.live[id] != nil }
    }

    /// The newest history record with `id`.
    func newestRecord(id: Int) -> TaskRecord? {
        self.state.withLock { $0.history.newest(id: id) }
    }

    /// The live tasks in no order; records are built outside the lock.
    var liveTasks: [any ManagedTask] {
        self.state.withLock { Array($0.live.values) }
    }

    /// The live tasks and, with `includeHistory`, the completed records, oldest first.
    func snapshot(includeHistory: Bool) -> (live: [any ManagedTask], history: [TaskRecord]) {
        self.state.withLock { (Array($0.live.values), includeHistory ? $0.history.records : []) }
    }

    var liveCount: Int {
        self.state.withLock { $0.live.count }
    }

    /// The live tasks with the totals of the completed ones, read together.
    func totals() -> (live: [any ManagedTask], totals: Totals) {
        self.state.withLock { state in
            var totals = state.totals
            totals.history = state.history.count
            return (Array(state.live.values), totals)
        }
    }

    /// Tasks started since start by kind, with the live ones, read together.
    func startedByKind() -> (started: [TaskKind: Int], live: [any ManagedTask]) {
        self.state.withLock { ($0.started, Array($0.live.values)) }
    }

    /// Every live task leaves (the daemon's last step); answered so that they are released
    /// outside the lock.
    func removeAll() -> [any ManagedTask] {
        self.state.withLock { state in
            defer { state.live.removeAll() }
            return Array(state.live.values)
        }
    }
}
