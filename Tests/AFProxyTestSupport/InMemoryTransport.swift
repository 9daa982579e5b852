import AFProxyCurl
import AFProxyManager
import AFProxyModel
import AFProxyRules
import AFProxyTunnel
import NIOCore

/// An `UpstreamTransport` with no thread and no socket: it records the commands the tasks send and
/// lets a test report what the session thread would (a head, body bytes, a flush, the
/// completion), on the test's own thread. Commands take no effect by themselves: a cancel does not
/// complete the transfer until the test says so, as curl's completion comes later too.
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
        var sent: [(transfer: UpstreamTransfer, command: Command)] = []
        var tunnels: [InMemoryTunnel] = []
        var probes: [String] = []
        var pin: Result<String, TaskFailure> = .failure(.tlsFailure("no pin configured"))
    }

    private let state = Locked(State())

    package init() {}

    // MARK: what the tasks sent

    /// Every command so far, in order, of every transfer.
    package var commands: [Command] { self.state.withLock { $0.sent.map(\.command) } }

    /// The commands sent for `transfer`, in order.
    package func commands(for transfer: UpstreamTransfer) -> [Command] {
        self.state.withLock { $0.sent.filter { $0.transfer === transfer }.map(\.command) }
    }

    /// The transfers started so far, in order (a transparent resume or a retry is a new one).
    package var started: [UpstreamTransfer] {
        self.state.withLock { $0.sent.filter { $0.command == .start }.map(\.transfer) }
    }

    /// The tunnels opened so far, in order.
    package var tunnels: [InMemoryTunnel] { self.state.withLock { $0.tunnels } }

    /// Each pin probe so far: `host:port` and the CA file it was to verify with (`-`: none).
    package var probes: [String] { self.state.withLock { $0.probes } }

    /// What the next pin probes answer.
    package func answerProbes(with result: Result<String, TaskFailure>) {
        self.state.withLock { $0.pin = result }
    }

    // MARK: UpstreamTransport

    package func start(_ transfer: UpstreamTransfer) { self.record(.start, transfer) }
    package func suspend(_ transfer: UpstreamTransfer) { self.record(.suspend, transfer) }
    package func resume(_ transfer: UpstreamTransfer) { self.record(.resume, transfer) }
    package func continueReceiving(_ transfer: UpstreamTransfer) { self.record(.continueReceiving, transfer) }
    package func continueSending(_ transfer: UpstreamTransfer) { self.record(.continueSending, transfer) }
    package func cancel(_ transfer: UpstreamTransfer, reason: TaskFailure) { self.record(.cancel(reason), transfer) }

    package func openTunnel(
        host: String, port: Int, eventLoop: any EventLoop, destinations: DestinationPolicy,
        delegate: any TunnelTransferDelegate, throttle: ThrottleTicket?, upgrade: TunnelUpgrade?
    ) -> any TunnelTransport {
        let tunnel = InMemoryTunnel(host: host, port: port, eventLoop: eventLoop, delegate: delegate)
        self.state.withLock { $0.tunnels.append(tunnel) }
        return tunnel
    }

    package func probePin(host: String, port: Int, caFile: String?) -> Result<String, TaskFailure> {
        self.state.withLock { state in
            state.probes.append("\(host):\(port) \(caFile ?? "-")")
            return state.pin
        }
    }

    private func record(_ command: Command, _ transfer: UpstreamTransfer) {
        self.state.withLock { $0.sent.append((transfer, command)) }
    }

    // MARK: reports, as the session thread makes them

    package func receiveHead(
        _ head: ProxyResponseHead, on transfer: UpstreamTransfer, metrics: TaskMetrics = TaskMetrics()
    ) {
        transfer.delegate?.transfer(transfer, didReceive: head, metrics: metrics)
    }

    /// Answers what the task said to the bytes (taken, taken with its window full, refused).
    package func receiveBody(_ bytes: [UInt8], on transfer: UpstreamTransfer) -> BodyReceipt {
        bytes.withUnsafeBytes { transfer.delegate?.transfer(transfer, didReceiveBodyBytes: $0) } ?? .taken
    }

    /// The end of one socket's turn: what the task gathered goes to its client.
    package func flush(_ transfer: UpstreamTransfer) {
        transfer.delegate?.transferDidFlush(transfer)
    }

    package func complete(
        _ transfer: UpstreamTransfer, with result: UpstreamResult, metrics: TaskMetrics = TaskMetrics()
    ) {
        transfer.delegate?.transfer(transfer, didCompleteWith: result, metrics: metrics)
    }
}
