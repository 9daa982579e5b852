import AFProxyManager
import AFProxyModel
import AFProxyRules
import NIOCore
import NIOPosix

/// One connection to the SOCKS5 port (`socks-listen`): reads the handshake (`SocksHandshake`),
/// checks the user and password against `proxy-auth-file` when the proxy has users, and hands
/// the connection on to the path every connection with a known destination takes
/// (`ArrivalSniffer`): plain HTTP becomes a task per request, TLS a stream task (intercepted
/// when a rule names the host), anything else a stream task named `host:port`, under the same
/// rules as proxied requests. A name is resolved by afproxy (socks5h).
///
/// The reply cannot wait for the destination: the client sends nothing before it, and what it
/// sends decides whether a connection is opened for it at all (requests go through the
/// upstream session's own connections). So a destination the rules refuse is answered with its
/// code (2), and a destination that cannot be reached closes the stream, or gets a 502.
final class SocksHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private var handshake: SocksHandshake
    private var buffer: ByteBuffer?
    private let manager: SessionManager
    private let authenticator: ProxyAuthenticator?
    private let clientAddress: String
    private let clientProcess: ClientProcessSlot?
    private let intercept: InterceptSetup?
    private let configuration: ListenerConfiguration
    private var timer: Scheduled<Void>?
    /// The proxy user the client authenticated as.
    private var user: String?
    private var context: ChannelHandlerContext?

    init(
        manager: SessionManager, authenticator: ProxyAuthenticator?, clientAddress: String,
        clientProcess: ClientProcessSlot?, intercept: InterceptSetup?, configuration: ListenerConfiguration
    ) {
        self.handshake = SocksHandshake(requiresCredentials: authenticator != nil)
        self.manager = manager
        self.authenticator = authenticator
        self.clientAddress = clientAddress
        self.clientProcess = clientProcess
        self.intercept = intercept
        self.configuration = configuration
    }

    /// A wrong password is answered after this long, as a wrong `Proxy-Authorization` is
    /// (`ProxyAuthGate.failureDelay`): guessing stays slow.
    static let failureDelay = ProxyAuthGate.failureDelay

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        // The whole handshake within `header-timeout`, as a request head: a client that stays
        // silent does not hold a connection.
        let channel = context.channel
        self.timer = context.eventLoop.scheduleTask(in: TimeAmount(self.configuration.headerTimeout)) {
            channel.close(promise: nil)
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
        self.timer?.cancel()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var bytes = self.unwrapInboundIn(data)
        if self.buffer == nil {
            self.buffer = bytes
        } else {
            self.buffer!.writeBuffer(&bytes)
        }
        self.drive(context: context)
    }

    func channelInactive(context: ChannelHandlerContext) {
        self.timer?.cancel()
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    private func drive(context: ChannelHandlerContext) {
        while var buffer = self.buffer {
            self.buffer = nil
            let step = self.handshake.read(&buffer)
            self.buffer = buffer
            switch step {
            case .needMore:
                return
            case .reply(let bytes):
                context.writeAndFlush(self.wrapOutboundOut(ByteBuffer(bytes: bytes)), promise: nil)
            case .verify(let credentials):
                self.verify(credentials, context: context)
                return
            case .connect(let host, let port):
                self.connect(host: host, port: port, context: context)
                return
            case .refuse(let bytes, _):
                self.close(after: bytes, context: context)
                return
            }
        }
    }

    private func verify(_ credentials: ProxyCredentials, context: ChannelHandlerContext) {
        guard let authenticator = self.authenticator else { return }
        switch authenticator.verdict(credentials: credentials) {
        case .allowed(let user):
            self.user = user
            self.checked(true, context: context)
        case .refused:
            self.checked(false, context: context)
        case .needsVerification:
            let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
            let eventLoop = context.eventLoop
            NIOThreadPool.singleton.runIfActive(eventLoop: eventLoop) {
                authenticator.verify(credentials)
            }.whenComplete { result in
                let valid = (try? result.get()) == true
                if valid {
                    bound.value.user = credentials.user
                    bound.value.resume(valid: true)
                } else {
                    eventLoop.scheduleTask(in: Self.failureDelay) { bound.value.resume(valid: false) }
                }
            }
        }
    }

    private func resume(valid: Bool) {
        guard let context = self.context else { return }
        self.checked(valid, context: context)
    }

    private func checked(_ valid: Bool, context: ChannelHandlerContext) {
        switch self.handshake.credentialsChecked(valid) {
        case .reply(let bytes):
            context.writeAndFlush(self.wrapOutboundOut(ByteBuffer(bytes: bytes)), promise: nil)
            self.drive(context: context)
        case .refuse(let bytes, _):
            self.close(after: bytes, context: context)
        default:
            break
        }
    }

    /// A destination the rules refuse gets its reply code (2) from the failed task; any other
    /// is answered at once, so that the client's first bytes can say what the connection
    /// carries (`ArrivalSniffer`): a failure to connect then closes the connection (a stream)
    /// or answers a 502 (a request).
    private func connect(host: String, port: Int, context: ChannelHandlerContext) {
        self.timer?.cancel()
        var request = StreamRequest(host: host, port: port, client: self.clientAddress, proxyUser: self.user)
        request.process = self.clientProcess
        let early = self.buffer ?? context.channel.allocator.buffer(capacity: 0)
        self.buffer = nil
        if self.manager.rules.destinationPolicy.denial(host: host) != nil {
            ConnectHandler.takeOverSocks(
                context, request: request, early: early, answered: false, manager: self.manager,
                intercept: self.intercept)
            return
        }
        context.writeAndFlush(self.wrapOutboundOut(ByteBuffer(bytes: self.handshake.reply(.succeeded))), promise: nil)
        let arrival = ArrivalSniffer.Arrival(
            host: host, port: port, client: self.clientAddress, proxyUser: self.user, process: self.clientProcess)
        do {
            try ArrivalSniffer.install(
                on: context.channel, arrival: arrival, manager: self.manager, configuration: self.configuration,
                intercept: self.intercept)
        } catch {
            context.close(promise: nil)
            return
        }
        if early.readableBytes > 0 {
            context.fireChannelRead(self.wrapInboundOut(early))
            context.fireChannelReadComplete()
        }
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }

    private func close(after bytes: [UInt8]?, context: ChannelHandlerContext) {
        self.timer?.cancel()
        let channel = context.channel
        guard let bytes else {
            channel.close(promise: nil)
            return
        }
        context.writeAndFlush(self.wrapOutboundOut(ByteBuffer(bytes: bytes))).whenComplete { _ in
            channel.close(promise: nil)
        }
    }
}
