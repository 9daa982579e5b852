import AFProxyModel

/// How a transfer ended, as its delegate hears it once, last. An engine maps its own errors to
/// the `TaskFailure` (curl's: `TaskFailure.fromCurl`).
package enum UpstreamResult: Sendable, Equatable {
    case success
    case failure(TaskFailure)
}
