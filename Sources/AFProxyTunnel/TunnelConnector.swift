import AFProxyModel
import AFProxyRules
import AFProxyServerKit
import NIOCore
import NIOPosix

#if canImport(Glibc)
import Glibc
#endif

/// Opens a tunnel's upstream TCP connection on the client connection's own event loop, so that
/// the relay between the two channels never leaves that thread (see `TunnelGlue`). The
/// addresses of the name are tried in turn, all within one `connect-timeout`.
///
/// Through an upstream proxy (`upstream-proxy`), the connection goes to the proxy and the tunnel
/// is opened with its handshake (`UpstreamProxyHandshake`) within the same timeout. The origin's
/// name is checked by the destination rules as for a direct tunnel; the proxy's addresses are
/// not, since a person configured the proxy on purpose and the origin's address is the proxy's
/// to resolve (see `DestinationCheck` in the curl module, which does the same).
///
/// Loop-confined: made, started and canceled on `eventLoop`; `completion` is called there once.
final class TunnelConnector {
    struct Connected {
        var channel: any Channel
        /// Nil for an address literal: no lookup happened.
        var dnsMs: Double?
        var connectMs: Double
        var remoteAddress: String
        /// What the upstream proxy sent after its answer: the origin's first bytes.
        var leftover: ByteBuffer?
    }

    private let eventLoop: any EventLoop
    private let host: String
    private let port: Int
    private let timeout: TimeAmount
    private let started: NIODeadline
    /// Checked on the host before the lookup and on each address before connecting to it.
    private let destinations: DestinationPolicy
    /// The upstream proxy to go through, nil: direct; and where to report whether it was reached.
    private let proxy: UpstreamProxy?
    private let liveUpstreamProxy: LiveUpstreamProxy?
    private var dnsMs: Double?
    /// The channel of the attempt in progress: a cancel closes it.
    private var current: (any Channel)?
    private var canceled = false
    private var completion: ((Result<Connected, TaskFailure>) -> Void)?

    init(
        host: String, port: Int, timeout: Duration, eventLoop: any EventLoop, started: NIODeadline,
        destinations: DestinationPolicy = .open, liveUpstreamProxy: LiveUpstreamProxy? = nil
    ) {
        self.destinations = destinations
        self.liveUpstreamProxy = liveUpstreamProxy
        self.proxy = liveUpstreamProxy?.proxy(forHost: host)
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
        let (host, port) = self.proxy.map { ($0.host, $0.port) } ?? (self.host, self.port)
        let literal = (try? SocketAddress(ipAddress: host, port: port)) != nil
        TunnelResolver.resolve(host: host, port: port, on: self.eventLoop).whenComplete { result in
            let this = bound.value
            switch result {
            case .success(let addresses):
                if !literal { this.dnsMs = this.millisecondsSinceStart() }
                let (allowed, denial) = this.allowedAddresses(addresses)
                if allowed.isEmpty, let denial { return this.finish(.failure(.destinationDenied(denial))) }
                this.attempt(allowed[...], lastError: nil)
            case .failure(let error):
                let detail = (error as? TunnelResolver.Failure)?.message ?? "\(error)"
                if let proxy = this.proxy {
                    return this.proxyUnreachable(proxy, "upstream proxy \(proxy): its name does not resolve: \(detail)")
                }
                this.finish(.failure(.dnsFailure("DNS lookup failed for \(this.host): \(detail)")))
            }
        }
    }

    /// The addresses the destination rules allow, and the first refusal among the others.
    private func allowedAddresses(_ addresses: [SocketAddress]) -> ([SocketAddress], DestinationDenial?) {
        guard self.destinations.checksAddresses, self.proxy == nil else { return (addresses, nil) }
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
                    let connected = Connected(
                        channel: channel, dnsMs: this.dnsMs, connectMs: this.millisecondsSinceStart(),
                        remoteAddress: address.endpointText)
                    guard let proxy = this.proxy else { return this.finish(.success(connected)) }
                    this.liveUpstreamProxy?.reached(proxy)
                    this.openThroughProxy(proxy, connected)
                case .failure(ChannelError.connectTimeout(let amount)):
                    // The deadline is shared: no time is left for the next address.
                    this.finish(.failure(this.failure(ChannelError.connectTimeout(amount))))
                case .failure(let error):
                    this.attempt(addresses.dropFirst(), lastError: error)
                }
            }
    }

    /// Runs the handshake on the connection to the proxy, within what is left of the timeout.
    private func openThroughProxy(_ proxy: UpstreamProxy, _ connected: Connected) {
        self.current = connected.channel
        let bound = NIOLoopBound(self, eventLoop: self.eventLoop)
        let timer = self.eventLoop.scheduleTask(deadline: self.deadline) {
            let this = bound.value
            guard this.completion != nil else { return }
            connected.channel.close(promise: nil)
            let seconds = Double(this.timeout.nanoseconds) / 1e9
            this.finish(
                .failure(
                    .connectTimeout("upstream proxy \(proxy) did not open the tunnel within \(seconds.formatted) s")))
        }
        let handshake = UpstreamProxyHandshake(proxy: proxy, host: self.host, port: self.port)
        let handler = UpstreamProxyHandshakeHandler(handshake) { result in
            let this = bound.value
            timer.cancel()
            this.current = nil
            switch result {
            case .success where this.canceled:
                connected.channel.close(promise: nil)
                this.finish(.failure(.canceled()))
            case .success(let leftover):
                var connected = connected
                connected.leftover = leftover
                connected.connectMs = this.millisecondsSinceStart()
                this.finish(.success(connected))
            case .failure(let failure):
                this.finish(.failure(this.canceled ? .canceled() : failure))
            }
        }
        do {
            try connected.channel.pipeline.syncOperations.addHandler(handler)
        } catch {
            timer.cancel()
            connected.channel.close(promise: nil)
            self.finish(.failure(.upstreamBroken("upstream proxy connection unusable: \(error)")))
        }
    }

    private func proxyUnreachable(_ proxy: UpstreamProxy, _ message: String) {
        self.liveUpstreamProxy?.unreachable(proxy, reason: message)
        self.finish(.failure(.upstreamProxyUnreachable(message)))
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
        if let proxy = self.proxy {
            let failure = self.directFailure(error, target: proxy.endpoint)
            let message = "upstream proxy \(proxy) unreachable: \(failure.message)"
            self.liveUpstreamProxy?.unreachable(proxy, reason: message)
            return .upstreamProxyUnreachable(message)
        }
        return self.directFailure(error, target: "\(self.host):\(self.port)")
    }

    private func directFailure(_ error: (any Error)?, target: String) -> TaskFailure {
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

}

extension Double {
    /// "30" rather than "30.0", "0.5" as is.
    fileprivate var formatted: String {
        self == self.rounded() ? String(Int(self)) : String(self)
    }
}
