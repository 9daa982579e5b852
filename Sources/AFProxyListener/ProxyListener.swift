import AFProxyManager
import AFProxyModel
import AFProxyRules
import AFProxyServerKit
import NIOCore
import NIOHTTP1
import NIOPosix
import ServiceLifecycle

/// The proxy's listening sockets (bound here, or adopted from systemd) and the pipeline of each
/// client connection. As a `Service` it runs until graceful shutdown, then stops accepting
/// (`ServerSockets`); the daemon's grace period for running tasks follows it in the group.
package final class ProxyListener: Service, Sendable {
    let manager: SessionManager
    let configuration: Locked<ListenerConfiguration>
    let group: any EventLoopGroup
    /// `max-connections`, and the 503 beyond it; also answers clients outside `allow-clients`.
    let admission: ConnectionAdmission
    private let sockets = ServerSockets()
    /// Over the rule book's access kind, so that a reload's users apply to open connections too.
    private let authenticator: ProxyAuthenticator
    /// Starts the lookup of a local client's process (the daemon's `ClientProcessLookup`); it
    /// answers at once with the slot the finding will go to, and never blocks the event loop.
    private let processLookup: ClientProcessLookupStart?
    /// The intercept rules and the local CA; nil: every CONNECT is a plain tunnel.
    let interception: Interception?
    /// Intercepted clients speaking HTTP/2, told to wind down (GOAWAY) when the listener stops.
    let http2Connections = HTTP2Connections()

    package init(
        manager: SessionManager, configuration: ListenerConfiguration, group: any EventLoopGroup,
        processLookup: ClientProcessLookupStart? = nil, interception: Interception? = nil,
        passwordHashing: any PasswordHashing
    ) {
        self.processLookup = processLookup
        self.interception = interception
        self.manager = manager
        self.configuration = Locked(configuration)
        self.group = group
        self.admission = ConnectionAdmission(
            limit: configuration.maxConnections, linger: Self.lingerTime, maxLingering: Self.maxRefusals)
        self.authenticator = ProxyAuthenticator(rules: manager.rules.access, hashing: passwordHashing)
    }

    /// Binds `host:port`; answers the bound address (the port is known when 0 was asked for).
    @discardableResult
    package func bind(host: String, port: Int) async throws -> SocketAddress {
        let channel = try await self.sockets.bind(self.bootstrap(), host: host, port: port)
        return channel.localAddress!
    }

    /// Adopts a listening socket handed over by systemd.
    @discardableResult
    package func adopt(descriptor: CInt) async throws -> SocketAddress {
        let channel = try await self.sockets.adopt(self.bootstrap(), descriptor: descriptor)
        return channel.localAddress!
    }

    /// Binds the SOCKS5 port (`socks-listen`) at `host:port`: its connections share this
    /// listener's connection limit, `allow-clients`, users and interception. Answers the bound
    /// address.
    @discardableResult
    package func bindSocks(host: String, port: Int) async throws -> SocketAddress {
        let channel = try await self.sockets.bind(self.socksBootstrap(), host: host, port: port)
        return channel.localAddress!
    }

    package var openConnections: Int { self.admission.openConnections }

    /// New connections get `configuration`; open ones keep theirs. `maxConnections` stays as at init.
    /// The access rules are the rule book's: `allow-clients` is asked by each new connection,
    /// the users of `proxy-auth-file` by every request, open connections included.
    package func reconfigure(_ configuration: ListenerConfiguration) {
        self.configuration.withLock { $0 = configuration }
    }

    package func run() async throws {
        await self.sockets.serve { self.http2Connections.quiesce() }
    }

    /// Reads start at 512 bytes, which hold most request heads, and grow while they fill, to
    /// 64 KiB: an idle keep-alive connection keeps its first buffer for good. NIO keeps the
    /// buffers of one read batch in a pool per channel (as many as `readsPerEvent`) and never
    /// shrinks them, so these two bound what a client connection holds for the rest of its life
    /// once it carried an upload.
    static let recvAllocator = AdaptiveRecvByteBufferAllocator(minimum: 64, initial: 512, maximum: 64 << 10)
    /// One read per readiness event: a pool of one buffer. A fast upload loses nothing
    /// measurable by it.
    static let readsPerEvent: UInt = 1

    private func bootstrap() -> ServerBootstrap {
        self.serverBootstrap { [self] channel in
            let configuration = self.configuration.withLock { $0 }
            let access = self.manager.rules.access.ruleSet
            let peer = channel.remoteAddress?.ipAddress.flatMap { IPAddress($0) }
            guard access.clients.allows(peer) else {
                let refusal = ProxyRefusal(.forbidden, "this client address may not use the proxy (allow-clients)")
                return self.admission.refuse(
                    channel, with: refusal.bytes(version: .http1_1, via: configuration.viaName))
            }
            let authenticator = access.users == nil ? nil : self.authenticator
            let validator = RequestValidator(
                via: configuration.viaName, maxHeaderBytes: configuration.maxHeaderBytes,
                connectPorts: configuration.allowedConnectPorts, authenticator: authenticator)
            guard self.admission.admit(channel) else {
                let refusal = Self.overLimitRefusal(limit: self.admission.limit)
                return self.admission.refuse(
                    channel, with: refusal.bytes(version: .http1_1, via: configuration.viaName))
            }
            let (client, process, intercept) = self.arrival(of: channel, configuration: configuration)
            return channel.eventLoop.makeCompletedFuture {
                let sync = channel.pipeline.syncOperations
                try sync.addHandler(Self.timeoutHandler(configuration))
                try Self.addHTTPHandlers(
                    to: sync, manager: self.manager, validator: validator, clientAddress: client,
                    limits: Self.decoderLimits(configuration), authenticator: authenticator, clientProcess: process,
                    intercept: intercept)
            }
        }
    }

    /// A SOCKS5 client refused before its greeting was read (over `max-connections`, outside
    /// `allow-clients`): the method selection no method can satisfy (RFC 1928 §3), which a
    /// client reads as a refusal where an HTTP answer would be garbage to it.
    static let socksRefusal: [UInt8] = [0x05, 0xFF]

    private func socksBootstrap() -> ServerBootstrap {
        self.serverBootstrap { [self] channel in
            let configuration = self.configuration.withLock { $0 }
            let access = self.manager.rules.access.ruleSet
            let peer = channel.remoteAddress?.ipAddress.flatMap { IPAddress($0) }
            guard access.clients.allows(peer), self.admission.admit(channel) else {
                return self.admission.refuse(channel, with: ByteBuffer(bytes: Self.socksRefusal))
            }
            let (client, process, intercept) = self.arrival(of: channel, configuration: configuration)
            let handler = SocksHandler(
                manager: self.manager, authenticator: access.users == nil ? nil : self.authenticator,
                clientAddress: client, clientProcess: process, intercept: intercept, configuration: configuration)
            return channel.eventLoop.makeCompletedFuture {
                try channel.pipeline.syncOperations.addHandler(handler)
            }
        }
    }

    /// The listening socket's options and its connections' (both ports).
    func serverBootstrap(
        _ initializer: @escaping @Sendable (any Channel) -> EventLoopFuture<Void>
    ) -> ServerBootstrap {
        ServerBootstrap(group: self.group)
            .serverChannelOption(.backlog, value: 1024)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.tcpOption(.tcp_nodelay), value: 1)
            .childChannelOption(.maxMessagesPerRead, value: Self.readsPerEvent)
            .childChannelOption(.recvAllocator, value: Self.recvAllocator)
            .childChannelInitializer(initializer)
    }

    /// What an admitted connection of either port carries to its tasks: the client's address,
    /// the lookup of its process (local clients only) and how its tunnels are intercepted.
    private func arrival(
        of channel: any Channel, configuration: ListenerConfiguration
    ) -> (client: String, process: ClientProcessSlot?, intercept: InterceptSetup?) {
        let client = channel.remoteAddress.map(\.endpointText) ?? "unknown"
        let process = self.processLookup.flatMap { lookup in
            ConnectionAddresses(local: channel.localAddress, peer: channel.remoteAddress).flatMap { addresses in
                addresses.peerIsLocal ? lookup(addresses) : nil
            }
        }
        let intercept = self.interception.map {
            InterceptSetup(
                interception: $0, configuration: configuration, limits: Self.decoderLimits(configuration),
                clientAddress: client, clientProcess: process, manager: self.manager,
                http2Connections: self.http2Connections)
        }
        return (client, process, intercept)
    }

    /// The HTTP handlers of a client connection, behind whatever `pipeline` holds already; the
    /// tests build theirs with it too. Answers the connection handler.
    @discardableResult
    static func addHTTPHandlers(
        to pipeline: ChannelPipeline.SynchronousOperations, manager: SessionManager, validator: RequestValidator,
        clientAddress: String, limits: NIOHTTPDecoderLimitConfiguration = .init(),
        authenticator: ProxyAuthenticator? = nil, clientProcess: ClientProcessSlot? = nil,
        intercept: InterceptSetup? = nil, carrier: RequestCarrier? = nil
    ) throws -> ProxyConnectionHandler {
        let codec = ClientCodec(decoder: RequestDecoder(limits: limits), authenticator: authenticator)
        let handler = ProxyConnectionHandler(
            manager: manager, validator: validator, clientAddress: clientAddress, codec: codec,
            clientProcess: clientProcess, intercept: intercept, carrier: carrier)
        try codec.install(in: pipeline)
        try pipeline.addHandler(handler)
        return handler
    }

    static func decoderLimits(_ configuration: ListenerConfiguration) -> NIOHTTPDecoderLimitConfiguration {
        var limits = NIOHTTPDecoderLimitConfiguration()
        limits.maxHeaderListSize = min(configuration.maxHeaderBytes, ListenerConfiguration.headerBytesCeiling)
        limits.maxHeaderFieldSize = limits.maxHeaderListSize
        return limits
    }

    /// The 503 for a connection over `limit`, written before the client sent anything: HTTP/1.1.
    static func overLimitRefusal(limit: Int) -> ProxyRefusal {
        ProxyRefusal(.serviceUnavailable, "the proxy is at its limit of \(limit) client connections", retryAfter: 1)
    }

    /// The idle timer, the header timer whose 408 names this proxy in `Via` (the head never
    /// arrived, so neither did its version: the 408 is HTTP/1.1), and the body timer, whose
    /// answer the connection handler writes (`ConnectionTimeoutHandler.BodySilent`).
    static func timeoutHandler(_ configuration: ListenerConfiguration) -> ConnectionTimeoutHandler {
        let via = configuration.viaName
        return ConnectionTimeoutHandler(
            idleTimeout: TimeAmount(configuration.idleTimeout), requestTimeout: TimeAmount(configuration.headerTimeout),
            bodyTimeout: TimeAmount(configuration.bodyTimeout), shedDelay: Self.shedDelay
        ) {
            ProxyRefusal(.requestTimeout, "the request head did not arrive in time").bytes(version: .http1_1, via: via)
        }
    }

    /// When an idle connection may shed its codec (`ConnectionTimeoutHandler.IdleForAWhile`): 250 ms
    /// is longer than the gap between a busy client's requests on one connection, far shorter than
    /// the seconds to minutes a browser keeps an idle connection open. Putting the codec back costs
    /// four handler allocations, a small part of a request through the proxy.
    static let shedDelay = TimeAmount.milliseconds(250)

    /// How long a refused connection waits, half-closed, for its client to close: long enough
    /// for the request to arrive and the answer to be read, on any link a local proxy serves.
    static let lingerTime = TimeAmount.seconds(1)
    /// Refused connections lingering at once (over `max-connections` or outside `allow-clients`);
    /// beyond them a refusal is written and closed at once, at the risk of a reset that loses it.
    static let maxRefusals = 32

}
