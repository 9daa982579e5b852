import AFProxyModel
import AFProxyTransport

/// The task's commands, from any thread: each goes to the session's inbox and takes effect on
/// the session thread, in the order sent, where a command for a completed transfer comes to nothing
/// (`SessionLoop.handle`). Nothing here touches the transfer's session-thread state.
extension UpstreamTransfer: HTTPTransfer {
    package func start() { self.session.start(self) }
    package func suspend() { self.session.suspend(self) }
    package func resume() { self.session.resume(self) }
    package func continueReceiving() { self.session.continueReceiving(self) }
    package func continueSending() { self.session.continueSending(self) }
    package func cancel(reason: TaskFailure) { self.session.cancel(self, reason: reason) }
}
