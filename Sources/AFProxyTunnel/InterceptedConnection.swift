import AFProxyModel
import NIOCore

/// The transport of an intercepted CONNECT's stream task: afproxy terminates the client's TLS
/// and reads each request inside as a task of its own, so nothing is connected upstream for the
/// CONNECT itself. What is left for the stream task is the client's connection: its raw byte
/// counts both ways, its reads held while a person suspends it (every request inside waits),
/// and closing it on cancel. The listener puts the TLS and HTTP handlers behind its gate.
///
/// Made, started and attached on `eventLoop`; `pause`, `resume`, `cancel` and the byte counts
/// from any thread.
package final class InterceptedConnection: Sendable {
    package let established: EventLoopFuture<Void>
    private let promise: EventLoopPromise<Void>
    private let eventLoop: any EventLoop
    private let counters = TunnelCounters()
    private let gate: NIOLoopBound<InterceptGate>

    package init(eventLoop: any EventLoop, delegate: any TunnelTransferDelegate) {
        self.eventLoop = eventLoop
        self.promise = eventLoop.makePromise(of: Void.self)
        self.established = self.promise.futureResult
        self.gate = NIOLoopBound(InterceptGate(counters: self.counters, delegate: delegate), eventLoop: eventLoop)
    }

    /// Nothing to connect: the client is answered 200 at once.
    package func start() {
        self.gate.value.established = true
        self.promise.succeed()
    }

    /// Puts the gate at the front of the client's pipeline (behind what is there already, the
    /// CONNECT's handlers leaving). False if the connection was canceled before.
    package func attachClient(_ channel: any Channel) -> Bool {
        let gate = self.gate.value
        guard !gate.isOver, (try? channel.pipeline.syncOperations.addHandler(gate, position: .first)) != nil else {
            return false
        }
        return true
    }

    package var bytesUp: Int64 { self.counters.uploaded.load(ordering: .relaxed) }
    package var bytesDown: Int64 { self.counters.downloaded.load(ordering: .relaxed) }

    /// From here no `read()` of the client reaches the socket: the requests inside wait.
    package func pause() {
        self.counters.setPaused(true)
    }

    package func resume() {
        self.counters.setPaused(false)
        let gate = self.gate
        self.eventLoop.execute { gate.value.resume() }
    }

    /// Closes the client's connection; the completion records `failure`. On the loop at once
    /// (the client's failed handshake is recorded before its connection's close is seen).
    package func cancel(_ failure: TaskFailure) {
        let gate = self.gate
        let promise = self.promise
        let end: @Sendable () -> Void = {
            if !gate.value.established { promise.fail(failure) }
            gate.value.end(failure)
        }
        if self.eventLoop.inEventLoop { end() } else { self.eventLoop.execute(end) }
    }
}
