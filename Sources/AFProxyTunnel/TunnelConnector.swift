import AFProxyModel
import AFProxyRules
import NIOCore
import NIOPosix

#if canImport(Glibc)
import Glibc
#endif

/// Opens a tunnel's upstream TCP connection on the client connection's own event loop, so that
/// the relay between the two channels never leaves that thread (see `TunnelGlue`). The
/// addresses of the name are tried in turn, all within one `connect-timeout`.
///
/// Loop-confined: made, started and canceled on `eventLoop`; `completion` is called there once.
final class TunnelConnector {
    struct Connected {
        var channel: any Channel
        /// Nil for an address literal: no lookup happened.
        var dnsMs: Double?
        var connectMs: Double
        var remoteAddress: String
    }

    private let eventLoop: any EventLoop
    private let host: String
    private let port: Int
    private let timeout: TimeAmount
    private let started: NIODeadline
    /// Checked on the host before the lookup and on each address before connecting to it.
    private let destinations: DestinationPolicy
    private var dnsMs: Double?
    /// The channel of the attempt in progress: a cancel closes it.
    private var current: (any Channel)?
    private var canceled = false
    private var completion: ((Result<Connected, TaskFailure>) -> Void)?

    init(
        host: String, port: Int, timeout: Duration, eventLoop: any EventLoop, started: NIODeadline,
        destinations: DestinationPolicy = .open
    ) {
        self.destinations = destinations
        self.host = host
        self.port = port
        self.timeout = TimeAmount(timeout)
        self.eventLoop = eventLoop
        self.started = started
    }

    func start(_ completion: @escaping (Result<Connected, TaskFailure>) -> Void) {
        self.completion = completion
        if let denial = self.destinations.isOpen ? nil : self.destinations.denial(host: self.host) {
            return self.finish(.failure(.destinationDenied(denial)))
        }
        let bound = NIOLoopBound(self, eventLoop: self.eventLoop)
        let literal = (try? SocketAddress(ipAddress: self.host, port: self.port)) != nil
        TunnelResolver.resolve(host: self.host, port: self.port, on: self.eventLoop).whenComplete { result in
            let this = bound.value
            switch result {
            case .success(let addresses):
                if !literal { this.dnsMs = this.millisecondsSinceStart() }
                let (allowed, denial) = this.allowedAddresses(addresses)
                if allowed.isEmpty, let denial { return this.finish(.failure(.destinationDenied(denial))) }
                this.attempt(allowed[...], lastError: nil)
            case .failure(let error):
                let detail = (error as? TunnelResolver.Failure)?.message ?? "\(error)"
                this.finish(.failure(.dnsFailure("DNS lookup failed for \(this.host): \(detail)")))
            }
        }
    }

    /// The addresses the destination rules allow, and the first refusal among the others.
    private func allowedAddresses(_ addresses: [SocketAddress]) -> ([SocketAddress], DestinationDenial?) {
        guard self.destinations.checksAddresses else { return (addresses, nil) }
        var denial: DestinationDenial?
        let allowed = addresses.filter { address in
            guard let ip = address.ipAddress.flatMap({ IPAddress($0) }) else { return false }
            guard let refused = self.destinations.denial(address: ip, host: self.host) else { return true }
            denial = denial ?? refused
            return false
        }
        return (allowed, denial)
    }

    /// Stops at once: the attempt in progress is closed and `completion` gets a `.canceled` failure.
    func cancel() {
        self.canceled = true
        self.current?.close(promise: nil)
    }

    private var deadline: NIODeadline { self.started + self.timeout }

    private func attempt(_ addresses: ArraySlice<SocketAddress>, lastError: (any Error)?) {
        guard !self.canceled else { return self.finish(.failure(.canceled())) }
        guard let address = addresses.first else {
            return self.finish(.failure(self.failure(lastError)))
        }
        let remaining = self.deadline - .now()
        guard remaining > .zero else {
            return self.finish(.failure(self.failure(ChannelError.connectTimeout(self.timeout))))
        }
        let bound = NIOLoopBound(self, eventLoop: self.eventLoop)
        ClientBootstrap(group: self.eventLoop)
            .connectTimeout(remaining)
            // A half-close of the origin reaches the relay as `inputClosed`, to be passed on.
            .channelOption(.allowRemoteHalfClosure, value: true)
            .channelOption(.tcpOption(.tcp_nodelay), value: 1)
            .channelOption(.maxMessagesPerRead, value: UInt(TunnelBuffers.readsPerBatch))
            .channelOption(.recvAllocator, value: TunnelBuffers.recvAllocator)
            .channelOption(.writeBufferWaterMark, value: TunnelBuffers.waterMark)
            .channelInitializer { channel in
                bound.value.current = channel
                return channel.eventLoop.makeSucceededVoidFuture()
            }
            .connect(to: address)
            .whenComplete { result in
                let this = bound.value
                this.current = nil
                switch result {
                case .success(let channel) where this.canceled:
                    channel.close(promise: nil)
                    this.finish(.failure(.canceled()))
                case .success(let channel):
                    this.finish(
                        .success(
                            Connected(
                                channel: channel, dnsMs: this.dnsMs, connectMs: this.millisecondsSinceStart(),
                                remoteAddress: Self.describe(address))))
                case .failure(ChannelError.connectTimeout(let amount)):
                    // The deadline is shared: no time is left for the next address.
                    this.finish(.failure(this.failure(ChannelError.connectTimeout(amount))))
                case .failure(let error):
                    this.attempt(addresses.dropFirst(), lastError: error)
                }
            }
    }

    private func finish(_ result: Result<Connected, TaskFailure>) {
        let completion = self.completion
        self.completion = nil
        completion?(result)
    }

    private func millisecondsSinceStart() -> Double {
        Double((NIODeadline.now() - self.started).nanoseconds) / 1_000_000
    }

    /// 502 for refused, unreachable and the like; 504 for a timeout (as for HTTP tasks).
    private func failure(_ error: (any Error)?) -> TaskFailure {
        let target = "\(self.host):\(self.port)"
        switch error {
        case ChannelError.connectTimeout?:
            let seconds = Double(self.timeout.nanoseconds) / 1e9
            return .connectTimeout("connecting to \(target) timed out after \(seconds.formatted) s")
        case let error as IOError:
            let reason = String(cString: strerror(error.errnoCode))
            let message = "connection to upstream \(target) failed: \(reason)"
            return error.errnoCode == ECONNREFUSED ? .connectionRefused(message) : .unreachable(message)
        case let error?:
            return .unreachable("connection to upstream \(target) failed: \(error)")
        case nil:
            return .unreachable("connection to upstream \(target) failed")
        }
    }

    static func describe(_ address: SocketAddress) -> String {
        EndpointText.of(host: address.ipAddress ?? "?", port: address.port ?? 0)
    }
}

extension Double {
    /// "30" rather than "30.0", "0.5" as is.
    fileprivate var formatted: String {
        self == self.rounded() ? String(Int(self)) : String(self)
    }
}
