import AFProxyModel

/// A task whose verbs are its machine's, decided under the machine's lock and carried out outside
/// it: the one way the three task classes suspend, resume and cancel, written once here.
protocol MachineDrivenTask: ManagedTask {
    associatedtype Machine: VerbMachine
    var machine: Locked<Machine> { get }
    /// Carries out what the machine decided; never called with the machine's lock held.
    func perform(_ action: Machine.VerbAction)
}

extension MachineDrivenTask {
    func suspend() throws(IllegalTransition) {
        self.perform(try self.machine.withLock { machine throws(IllegalTransition) in try machine.suspend() })
    }

    func resume() throws(IllegalTransition) {
        self.perform(try self.machine.withLock { machine throws(IllegalTransition) in try machine.resume() })
    }

    func cancel(_ failure: TaskFailure) throws(IllegalTransition) {
        self.perform(try self.machine.withLock { machine throws(IllegalTransition) in try machine.cancel(failure) })
    }
}
