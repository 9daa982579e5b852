import AFProxyModel

extension ManagedTask {
    /// Where the lookup of the task's client process puts what it finds; nil for a task with no
    /// client connection (a download) or one not looked up (a remote client).
    var processSlot: ClientProcessSlot? { nil }
}

extension HTTPTask {
    var processSlot: ClientProcessSlot? { self.request.process }
}

extension StreamTask {
    var processSlot: ClientProcessSlot? { self.request.process }
}

extension SessionManager {
    /// A task can complete before the lookup of its client's process ended (the lookup is kept
    /// off the request's path): its history record gets the process when it is found.
    ///
    /// The lookup may also end while the task completes, after `record` was taken without the
    /// process and before this runs: the slot is then settled, and `whenSettled` hands its
    /// process over at once. Asking `isSettled` first, as this did, lost that process for good
    /// (a quick request's or a tunnel's history record without it, more often on a busy machine).
    static func recordProcessLater(of task: any ManagedTask, in record: TaskRecord, registry: TaskRegistry) {
        guard record.clientProcess == nil, let slot = task.processSlot else { return }
        let id = task.id
        slot.whenSettled { process in
            registry.updateHistory(id: id) { $0.clientProcess = process }
        }
    }

    /// The client process of a task that completed, as its history record has it now (it may
    /// have arrived after the completion).
    package func clientProcess(ofCompleted id: Int) -> ClientProcess? {
        self.registry.newestRecord(id: id)?.clientProcess
    }
}
