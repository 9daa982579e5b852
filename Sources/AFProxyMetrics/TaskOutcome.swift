import AFProxyModel

/// The `outcome` label of a completed task: `success`, or its failure code. The codes are
/// `TaskFailure.allCodes`, a closed set, so the label cannot grow with traffic; a record whose
/// error carries no known code (none should) counts as `internal-error` rather than adding a value.
package enum TaskOutcome {
    package static let success = "success"

    /// Every value the label takes, so that each series exists (at 0) from the first scrape.
    package static var all: [String] { [success] + TaskFailure.allCodes }

    package static func label(errorCode: String?, error: String?) -> String {
        if let errorCode {
            return TaskFailure.allCodes.contains(errorCode) ? errorCode : Self.fallback
        }
        return error == nil ? Self.success : Self.fallback
    }

    static let fallback = TaskFailure.internalError("").code
}
