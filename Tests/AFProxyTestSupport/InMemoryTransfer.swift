import AFProxyModel
import AFProxyTransport

/// One `HTTPTransfer` of an `InMemoryTransport`: it moves nothing and records each command with
/// its transport, in the order of all of them, for the tests to read (`commands(for:)`). Its
/// delegate stays set for its whole life (curl's is cleared at completion), so that a test can
/// play any report in any order, a stale transfer's included.
package final class InMemoryTransfer: HTTPTransfer {
    package let request: TransferRequest
    /// A chunked response's trailers are curl's to read: in memory there are none.
    package let trailers: HTTPHeaderList = []
    package let delegate: any HTTPTransferDelegate
    private let transport: InMemoryTransport

    init(request: TransferRequest, delegate: any HTTPTransferDelegate, transport: InMemoryTransport) {
        self.request = request
        self.delegate = delegate
        self.transport = transport
    }

    package func start() { self.transport.record(.start, self) }
    package func suspend() { self.transport.record(.suspend, self) }
    package func resume() { self.transport.record(.resume, self) }
    package func continueReceiving() { self.transport.record(.continueReceiving, self) }
    package func continueSending() { self.transport.record(.continueSending, self) }
    package func cancel(reason: TaskFailure) { self.transport.record(.cancel(reason), self) }
}
