import AFProxyManager
import AFProxyModel
import AFProxyRules
import NIOCore
import NIOPosix

/// One connection to the SOCKS5 port (`socks-listen`): reads the handshake (`SocksHandshake`),
/// checks the user and password against `proxy-auth-file` when the proxy has users, and hands
/// the request on as a CONNECT tunnel would be (`ConnectHandler`): a stream task named
/// `host:port`, under the same rules (deny, hold, throttle, intercept). A name is resolved by
/// afproxy (socks5h); the reply says how the destination answered (RFC 1928 §6 codes).
///
/// When an intercept rule names the host, the reply cannot wait for the origin (none is opened
/// before the first request inside), so it is written at once and the client's first byte
/// decides: a TLS handshake is intercepted, anything else (plain HTTP to port 80, say) is relayed
/// to the destination as a plain tunnel, which then reports a failure to connect by closing.
final class SocksHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private var handshake: SocksHandshake
    private var buffer: ByteBuffer?
    private let manager: SessionManager
    private let authenticator: ProxyAuthenticator?
    private let clientAddress: String
    private let clientProcess: ClientProcessSlot?
    private let intercept: InterceptSetup?
    private let timeout: TimeAmount
    private var timer: Scheduled<Void>?
    /// The proxy user the client authenticated as.
    private var user: String?
    /// The request of an intercepted host, answered already: waits for the client's first byte.
    private var sniffing: StreamRequest?
    private var context: ChannelHandlerContext?

    init(
        manager: SessionManager, authenticator: ProxyAuthenticator?, clientAddress: String,
        clientProcess: ClientProcessSlot?, intercept: InterceptSetup?, timeout: TimeAmount
    ) {
        self.handshake = SocksHandshake(requiresCredentials: authenticator != nil)
        self.manager = manager
        self.authenticator = authenticator
        self.clientAddress = clientAddress
        self.clientProcess = clientProcess
        self.intercept = intercept
        self.timeout = timeout
    }

    /// A wrong password is answered after this long, as a wrong `Proxy-Authorization` is
    /// (`ProxyAuthGate.failureDelay`): guessing stays slow.
    static let failureDelay = ProxyAuthGate.failureDelay

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        // The whole handshake within `header-timeout`, as a request head: a client that stays
        // silent does not hold a connection.
        let channel = context.channel
        self.timer = context.eventLoop.scheduleTask(in: self.timeout) { channel.close(promise: nil) }
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
        if let request = self.sniffing {
            self.sniff(request, context: context)
        } else {
            self.drive(context: context)
        }
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

    private func connect(host: String, port: Int, context: ChannelHandlerContext) {
        var request = StreamRequest(host: host, port: port, client: self.clientAddress, proxyUser: self.user)
        request.process = self.clientProcess
        if self.intercept?.interception.intercepts(host: host) == true {
            context.writeAndFlush(
                self.wrapOutboundOut(ByteBuffer(bytes: self.handshake.reply(.succeeded))), promise: nil)
            self.sniff(request, context: context)
            return
        }
        self.handOver(request, answered: false, context: context)
    }

    /// The first byte after the reply: 0x16 opens a TLS handshake (RFC 8446 §5.1, a handshake
    /// record), which is intercepted; anything else goes on as a plain tunnel.
    private func sniff(_ request: StreamRequest, context: ChannelHandlerContext) {
        guard let first = self.buffer?.readableBytesView.first else {
            self.sniffing = request
            return
        }
        var request = request
        request.intercepted = first == 0x16
        self.handOver(request, answered: true, context: context)
    }

    private func handOver(_ request: StreamRequest, answered: Bool, context: ChannelHandlerContext) {
        self.timer?.cancel()
        let early = self.buffer ?? context.channel.allocator.buffer(capacity: 0)
        self.buffer = nil
        ConnectHandler.takeOverSocks(
            context, request: request, early: early, answered: answered, manager: self.manager,
            intercept: self.intercept)
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
