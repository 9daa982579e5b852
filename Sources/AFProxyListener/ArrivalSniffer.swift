import AFProxyManager
import AFProxyModel
import NIOCore

/// The one path of a connection whose destination afproxy knows before the client says
/// anything (a SOCKS5 CONNECT, a captured connection): holds the client's first bytes until
/// `ArrivalSniff` tells what they are, then hands the connection on as a proxied one would go.
/// An HTTP/1.x request gets the proxy's HTTP handlers, each request a task with its full URL
/// (`KnownOrigin`); a TLS ClientHello a stream task named by its server name, intercepted when
/// an intercept rule names it; anything else a stream task to the destination. Both stream
/// kinds go through `ConnectHandler`, as a CONNECT's tunnel does.
///
/// A client that says nothing may be waiting for the server to speak first (SMTP, MySQL): after
/// `serverFirstDelay` of silence, or at once for a port such protocols use, the connection is
/// relayed as bytes.
final class ArrivalSniffer: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    /// Where the connection goes and what its tasks carry.
    struct Arrival {
        var host: String
        var port: Int
        var client: String
        var proxyUser: String?
        var process: ClientProcessSlot?
        /// The connection's own content names its origin (`Host`, the TLS server name): a
        /// captured connection, whose destination is an address. A SOCKS5 client named it.
        var followsHost = false
        /// `afproxyctl run --intercept`: every TLS connection is intercepted, whatever the rules.
        var interceptAll = false
    }

    private let arrival: Arrival
    private let manager: SessionManager
    private let configuration: ListenerConfiguration
    private let intercept: InterceptSetup?
    private var sniff = ArrivalSniff()
    private var held: ByteBuffer?
    private var timer: Scheduled<Void>?
    private var context: ChannelHandlerContext?
    private var done = false

    /// How long a silent client is waited for before the server is taken to speak first.
    static let serverFirstDelay = TimeAmount.milliseconds(500)
    /// Ports of protocols whose server speaks first (FTP, SMTP, POP3, IMAP, submission, MySQL,
    /// VNC): no client bytes are waited for.
    static let serverFirstPorts: Set<Int> = [21, 25, 110, 143, 587, 3306, 5900]

    init(arrival: Arrival, manager: SessionManager, configuration: ListenerConfiguration, intercept: InterceptSetup?) {
        self.arrival = arrival
        self.manager = manager
        self.configuration = configuration
        self.intercept = intercept
    }

    /// Puts a sniffer behind what `pipeline` holds and starts waiting for the client's bytes.
    static func install(
        on channel: any Channel, arrival: Arrival, manager: SessionManager, configuration: ListenerConfiguration,
        intercept: InterceptSetup?
    ) throws {
        let sniffer = ArrivalSniffer(
            arrival: arrival, manager: manager, configuration: configuration, intercept: intercept)
        // A client that sends its request and half-closes is still to be answered.
        try channel.syncOptions?.setOption(.allowRemoteHalfClosure, value: true)
        try channel.pipeline.syncOperations.addHandler(sniffer)
        sniffer.begin()
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
        self.timer?.cancel()
    }

    private func begin() {
        guard let context = self.context else { return }
        if Self.serverFirstPorts.contains(self.arrival.port) { return self.decide(.other, context: context) }
        self.wait(Self.serverFirstDelay, context: context)
    }

    private func wait(_ delay: TimeAmount, context: ChannelHandlerContext) {
        self.timer?.cancel()
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        self.timer = context.eventLoop.scheduleTask(in: delay) {
            let sniffer = bound.value
            guard let context = sniffer.context else { return }
            sniffer.decide(sniffer.sniff.settle(), context: context)
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var bytes = self.unwrapInboundIn(data)
        guard !self.done else { return }
        let first = self.held == nil
        let verdict = self.sniff.read(bytes.readableBytesView)
        if self.held == nil {
            self.held = bytes
        } else {
            self.held!.writeBuffer(&bytes)
        }
        if let verdict { return self.decide(verdict, context: context) }
        // The rest of a hello or a request line within `header-timeout`, as a request head.
        if first { self.wait(TimeAmount(self.configuration.headerTimeout), context: context) }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard case .some(.inputClosed) = event as? ChannelEvent else {
            return context.fireUserInboundEventTriggered(event)
        }
        guard !self.done else { return }
        if self.held == nil {
            // Nothing sent at all: nothing to take anywhere.
            self.done = true
            context.close(promise: nil)
            return
        }
        self.decide(self.sniff.settle(), inputEnded: true, context: context)
    }

    func channelInactive(context: ChannelHandlerContext) {
        self.timer?.cancel()
        self.done = true
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    private func decide(_ verdict: ArrivalSniff.Verdict, inputEnded: Bool = false, context: ChannelHandlerContext) {
        guard !self.done else { return }
        self.done = true
        self.timer?.cancel()
        let held = self.held ?? context.channel.allocator.buffer(capacity: 0)
        self.held = nil
        switch verdict {
        case .http where !inputEnded:
            do {
                try self.installHTTP(context: context)
            } catch {
                context.close(promise: nil)
                return
            }
            context.fireChannelRead(self.wrapInboundOut(held))
            context.fireChannelReadComplete()
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
        case .tls(let serverName):
            let name = self.arrival.followsHost ? serverName ?? self.arrival.host : self.arrival.host
            var request = self.streamRequest(host: name)
            if let intercept = self.intercept {
                request.intercepted = self.arrival.interceptAll || intercept.interception.intercepts(host: name)
            }
            self.relay(request, early: held, inputEnded: inputEnded, context: context)
        case .http, .other:
            self.relay(
                self.streamRequest(host: self.arrival.host), early: held, inputEnded: inputEnded, context: context)
        }
    }

    private func streamRequest(host: String) -> StreamRequest {
        StreamRequest(
            host: host, port: self.arrival.port, client: self.arrival.client, proxyUser: self.arrival.proxyUser,
            process: self.arrival.process)
    }

    private func relay(_ request: StreamRequest, early: ByteBuffer, inputEnded: Bool, context: ChannelHandlerContext) {
        ConnectHandler.takeOverSocks(
            context, request: request, early: early, inputEnded: inputEnded, answered: true, manager: self.manager,
            intercept: self.intercept)
    }

    /// The HTTP handlers a proxied connection has, behind this one, for requests in origin form
    /// to the destination (or, captured, to the origin `Host` names).
    private func installHTTP(context: ChannelHandlerContext) throws {
        let configuration = self.configuration
        try context.channel.syncOptions?.setOption(.allowRemoteHalfClosure, value: false)
        var validator = RequestValidator(
            via: configuration.viaName, maxHeaderBytes: configuration.maxHeaderBytes,
            connectPorts: configuration.allowedConnectPorts)
        validator.knownOrigin = KnownOrigin(
            host: self.arrival.host, port: self.arrival.port, tls: false, followsHost: self.arrival.followsHost)
        let pipeline = context.pipeline.syncOperations
        try pipeline.addHandler(ProxyListener.timeoutHandler(configuration))
        try ProxyListener.addHTTPHandlers(
            to: pipeline, manager: self.manager, validator: validator, clientAddress: self.arrival.client,
            limits: ProxyListener.decoderLimits(configuration), clientProcess: self.arrival.process,
            carrier: RequestCarrier(task: nil, proxyUser: self.arrival.proxyUser))
    }
}
