import AFProxyModel

/// A task's state machine as a person's verbs reach it: each answers what its task is to carry out
/// (`HTTPTaskStateMachine`, `StreamTaskStateMachine`, `DownloadStateMachine`), or refuses.
protocol VerbMachine {
    associatedtype VerbAction
    mutating func suspend() throws(IllegalTransition) -> VerbAction
    mutating func resume() throws(IllegalTransition) -> VerbAction
    mutating func cancel(_ failure: TaskFailure) throws(IllegalTransition) -> VerbAction
}

extension HTTPTaskStateMachine: VerbMachine {}
extension StreamTaskStateMachine: VerbMachine {}
extension DownloadStateMachine: VerbMachine {}
