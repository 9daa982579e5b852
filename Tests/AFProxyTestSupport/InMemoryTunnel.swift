import AFProxyManager
import AFProxyModel
import AFProxyTunnel
import NIOCore

/// A `TunnelTransport` that connects nothing: it records what its stream task asked and lets a
/// test report the connection and the end, as the relay would on the tunnel's event loop.
package final class InMemoryTunnel: TunnelTransport {
    package enum Command: Sendable, Equatable {
        case start
        case pause
        case resume
        case cancel(TaskFailure)
    }

    package let host: String
    package let port: Int
    package let established: EventLoopFuture<Void>
    private let promise: EventLoopPromise<Void>
    private let delegate: any TunnelTransferDelegate
    private let sent = Locked<[Command]>([])

    init(host: String, port: Int, eventLoop: any EventLoop, delegate: any TunnelTransferDelegate) {
        self.host = host
        self.port = port
        self.promise = eventLoop.makePromise()
        self.established = self.promise.futureResult
        self.delegate = delegate
    }

    package var commands: [Command] { self.sent.withLock { $0 } }
    package var bytesUp: Int64 { 0 }
    package var bytesDown: Int64 { 0 }

    package func start() { self.sent.withLock { $0.append(.start) } }
    package func pause() { self.sent.withLock { $0.append(.pause) } }
    package func resume() { self.sent.withLock { $0.append(.resume) } }
    package func cancel(_ failure: TaskFailure) { self.sent.withLock { $0.append(.cancel(failure)) } }
    package func attachClient(_ channel: any Channel) -> Bool { true }

    // MARK: reports, as the relay makes them

    /// The upstream connection is open (the task's connection metrics stay empty). On the loop.
    package func connect() {
        self.promise.succeed()
    }

    /// The tunnel ended (once, last); before it was established, `established` fails with the
    /// end's failure. On the loop.
    package func complete(_ end: TunnelEnd) {
        self.promise.fail(end.failure ?? TaskFailure.canceled())
        self.delegate.tunnelDidComplete(end)
    }
}
