/// How a completed task ended, in the one meaning the stats, the log and the metrics share: a
/// failure is an error other than a cancellation (a person canceled, the client went away, the
/// daemon stopped), which is counted apart.
extension TaskRecord {
    package var isCancellation: Bool {
        guard let code = self.errorCode else { return false }
        return TaskFailure.isCancellation(code: code)
    }

    package var isFailure: Bool {
        self.error != nil && !self.isCancellation
    }
}
