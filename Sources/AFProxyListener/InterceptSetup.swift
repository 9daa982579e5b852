import AFProxyManager
import AFProxyModel
import AFProxyServerKit
import NIOCore
import NIOHTTP1
import NIOTLS

/// What a client connection needs to turn an intercepted CONNECT into a connection of its own:
/// once the 200 is written, the TLS server side with a minted certificate (put in place when
/// the client's hello is read: `ClientHelloGate`), the handshake watch,
/// the header and idle timers (now on the decrypted bytes, so that a 408 reaches the client
/// inside its TLS) and, once the handshake says which protocol the client chose (ALPN), the
/// HTTP/1 handlers or the HTTP/2 connection (`InterceptSetup+HTTP2.swift`), whose requests go to
/// `https://host:port` as tasks with the CONNECT's stream task as their parent.
///
/// A class: every plain connection's handlers hold one or none, and held inline, as a struct,
/// its ~200 bytes were in each of them with interception off too (an idle keep-alive connection
/// is about 5 KiB in all).
final class InterceptSetup: Sendable {
    let interception: Interception
    let configuration: ListenerConfiguration
    let limits: NIOHTTPDecoderLimitConfiguration
    let clientAddress: String
    let clientProcess: ClientProcessSlot?
    let manager: SessionManager
    /// Where an HTTP/2 connection is kept for the listener's graceful stop.
    let http2Connections: HTTP2Connections?

    init(
        interception: Interception, configuration: ListenerConfiguration, limits: NIOHTTPDecoderLimitConfiguration,
        clientAddress: String, clientProcess: ClientProcessSlot?, manager: SessionManager,
        http2Connections: HTTP2Connections? = nil
    ) {
        self.interception = interception
        self.configuration = configuration
        self.limits = limits
        self.clientAddress = clientAddress
        self.clientProcess = clientProcess
        self.manager = manager
        self.http2Connections = http2Connections
    }

    /// On the client's loop, behind what `channel`'s pipeline holds (the CONNECT's handler,
    /// leaving next). Throws when the CA cannot mint now; the caller closes the connection.
    func install(on channel: any Channel, task: StreamTask) throws {
        let request = task.request
        guard self.interception.certificates.isReady else {
            task.clientHandshakeFailed(.clientTLSFailed("the local CA cannot issue certificates now"))
            throw ChannelError.ioOnClosedChannel
        }
        let pipeline = channel.pipeline.syncOperations
        // The CONNECT's timers go: the ones below time the requests inside.
        if let outer = try? pipeline.handler(type: ConnectionTimeoutHandler.self) {
            pipeline.removeHandler(outer, promise: nil)
        }
        try channel.syncOptions?.setOption(.allowRemoteHalfClosure, value: false)
        let interception = self.interception
        let records = TLSRecordWatch()
        try pipeline.addHandler(records)
        // The TLS handler goes behind the gate once the client's hello says which key it takes.
        try pipeline.addHandler(
            ClientHelloGate(
                records: records, certificates: self.interception.certificates, connectHost: request.host,
                task: task))
        try pipeline.addHandler(
            ClientHandshakeWatch(
                task: task, host: request.host, records: records,
                timeout: TimeAmount(self.configuration.headerTimeout)
            ) { passthrough in
                switch passthrough {
                case .now(let reason): interception.clientRefused(host: request.host, reason: reason)
                case .onRepeat(let reason): interception.clientLikelyRejected(host: request.host, reason: reason)
                }
            })
        try pipeline.addHandler(ProxyListener.timeoutHandler(self.configuration))
        // The TLS handler's handshake event names the protocol; reads wait until it is in place.
        try pipeline.addHandler(
            ApplicationProtocolNegotiationHandler { result, channel in
                channel.eventLoop.makeCompletedFuture {
                    // HTTP/2 comes with the TLS stack (the `Interception` trait): without it
                    // no connection is intercepted, and swift-nio-http2 is not built.
                    #if Interception
                    if case .negotiated(InterceptSetup.http2Protocol) = result {
                        try self.installHTTP2(on: channel, task: task)
                        return
                    }
                    #endif
                    try self.installHTTP1(on: channel, task: task)
                }
            })
    }

    /// HTTP/1.1, as every intercepted connection spoke before HTTP/2 was offered.
    private func installHTTP1(on channel: any Channel, task: StreamTask) throws {
        try ProxyListener.addHTTPHandlers(
            to: channel.pipeline.syncOperations, manager: self.manager, validator: self.validator(for: task.request),
            clientAddress: self.clientAddress, limits: self.limits, clientProcess: self.clientProcess,
            carrier: RequestCarrier(task: task, proxyUser: task.request.proxyUser))
    }

    /// The ALPN name of HTTP/2 over TLS, which afproxy's TLS side offers beside `http/1.1`
    /// (`InterceptTLS`); a client that offers neither, or only `http/1.1`, speaks HTTP/1.
    static let http2Protocol = "h2"

    /// How the requests inside are checked: in origin form, for the CONNECT's host.
    func validator(for request: StreamRequest, http2: Bool = false) -> RequestValidator {
        var validator = RequestValidator(
            via: self.configuration.viaName, maxHeaderBytes: self.configuration.maxHeaderBytes,
            connectPorts: self.configuration.allowedConnectPorts)
        validator.knownOrigin = KnownOrigin(host: request.host, port: request.port)
        validator.http2 = http2
        return validator
    }
}

/// What a request takes from the connection it came in when that connection was opened for it
/// before (a CONNECT, a SOCKS5 handshake, a capture): the intercepted connection's stream task,
/// which counts the request (nil for plain HTTP read from a SOCKS5 or captured connection), and
/// the proxy user who opened it.
struct RequestCarrier {
    let task: StreamTask?
    let proxyUser: String?
}
