/// The delegate's answer to response bytes (`HTTPTransferDelegate`): its backpressure, as
/// async-http-client's delegate answers a body part with a future.
package enum BodyReceipt: Sendable, Equatable {
    case taken
    /// Taken, and no more now: receiving pauses until `continueReceiving`.
    case takenWindowFull
    /// Not taken (the task is suspended): the engine keeps them and offers them again on resume.
    case refused
}
