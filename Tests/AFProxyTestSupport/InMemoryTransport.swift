import AFProxyManager
import AFProxyModel
import AFProxyRules
import AFProxyTransport
import AFProxyTunnel
import NIOCore

/// An `UpstreamTransport` with no thread and no socket: its transfers (`InMemoryTransfer`) record
/// the commands the tasks send, and a test reports what the session thread would (a head, body
/// bytes, a flush, the completion), on the test's own thread. Commands take no effect by
/// themselves: a cancel does not complete the transfer until the test says so, as curl's
/// completion comes later too.
package final class InMemoryTransport: UpstreamTransport {
    /// A command a task sent for one transfer.
    package enum Command: Sendable, Equatable {
        case start
        case suspend
        case resume
        case continueReceiving
        case continueSending
        case cancel(TaskFailure)
    }

    private struct State {
        var sent: [(transfer: InMemoryTransfer, command: Command)] = []
        var tunnels: [InMemoryTunnel] = []
        var intercepted: [InMemoryTunnel] = []
        var probes: [String] = []
        var pin: Result<String, TaskFailure> = .failure(.tlsFailure("no pin configured"))
    }

    private let state = Locked(State())

    package init() {}

    // MARK: what the tasks sent

    /// Every command so far, in order, of every transfer.
    package var commands: [Command] { self.state.withLock { $0.sent.map(\.command) } }

    /// The commands sent for `transfer`, in order.
    package func commands(for transfer: any HTTPTransfer) -> [Command] {
        self.state.withLock { $0.sent.filter { $0.transfer === transfer }.map(\.command) }
    }

    /// The transfers started so far, in order (a transparent resume or a retry is a new one).
    package var started: [InMemoryTransfer] {
        self.state.withLock { $0.sent.filter { $0.command == .start }.map(\.transfer) }
    }

    /// The tunnels opened so far, in order.
    package var tunnels: [InMemoryTunnel] { self.state.withLock { $0.tunnels } }

    /// The intercepted connections opened so far, in order (each an `InMemoryTunnel` to no host).
    package var interceptedConnections: [InMemoryTunnel] { self.state.withLock { $0.intercepted } }

    /// Each pin probe so far: `host:port` and the CA file it was to verify with (`-`: none).
    package var probes: [String] { self.state.withLock { $0.probes } }

    /// What the next pin probes answer.
    package func answerProbes(with result: Result<String, TaskFailure>) {
        self.state.withLock { $0.pin = result }
    }

    // MARK: UpstreamTransport

    package func makeTransfer(_ request: TransferRequest, delegate: any HTTPTransferDelegate) -> any HTTPTransfer {
        InMemoryTransfer(request: request, delegate: delegate, transport: self)
    }

    package func openTunnel(
        host: String, port: Int, eventLoop: any EventLoop, destinations: DestinationPolicy,
        delegate: any TunnelTransferDelegate, throttle: ThrottleTicket?, upgrade: TunnelUpgrade?
    ) -> any TunnelTransport {
        let tunnel = InMemoryTunnel(host: host, port: port, eventLoop: eventLoop, delegate: delegate)
        self.state.withLock { $0.tunnels.append(tunnel) }
        return tunnel
    }

    package func openInterceptedConnection(
        eventLoop: any EventLoop, delegate: any TunnelTransferDelegate
    ) -> any TunnelTransport {
        let connection = InMemoryTunnel(host: "", port: 0, eventLoop: eventLoop, delegate: delegate)
        self.state.withLock { $0.intercepted.append(connection) }
        return connection
    }

    package func probePin(host: String, port: Int, caFile: String?) -> Result<String, TaskFailure> {
        self.state.withLock { state in
            state.probes.append("\(host):\(port) \(caFile ?? "-")")
            return state.pin
        }
    }

    /// What an `InMemoryTransfer` was told, in the one order of every transfer's commands.
    func record(_ command: Command, _ transfer: InMemoryTransfer) {
        self.state.withLock { $0.sent.append((transfer, command)) }
    }

    // MARK: reports, as the session thread makes them

    package func receiveHead(
        _ head: ProxyResponseHead, on transfer: any HTTPTransfer, metrics: TaskMetrics = TaskMetrics()
    ) {
        Self.delegate(of: transfer).transfer(transfer, didReceive: head, metrics: metrics)
    }

    /// Answers what the task said to the bytes (taken, taken with its window full, refused).
    package func receiveBody(_ bytes: [UInt8], on transfer: any HTTPTransfer) -> BodyReceipt {
        bytes.withUnsafeBytes { Self.delegate(of: transfer).transfer(transfer, didReceiveBodyBytes: $0) }
    }

    /// The end of one socket's turn: what the task gathered goes to its client.
    package func flush(_ transfer: any HTTPTransfer) {
        Self.delegate(of: transfer).transferDidFlush(transfer)
    }

    package func complete(
        _ transfer: any HTTPTransfer, with result: UpstreamResult, metrics: TaskMetrics = TaskMetrics()
    ) {
        Self.delegate(of: transfer).transfer(transfer, didCompleteWith: result, metrics: metrics)
    }

    /// The task a transfer of this transport reports to; a transfer of another transport is a
    /// mistake in the test.
    private static func delegate(of transfer: any HTTPTransfer) -> any HTTPTransferDelegate {
        guard let transfer = transfer as? InMemoryTransfer else {
            preconditionFailure("\(type(of: transfer)) is not a transfer of an InMemoryTransport")
        }
        return transfer.delegate
    }
}
