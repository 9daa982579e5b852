import AFProxyManager
import AFProxyModel
import AFProxyServerKit
import NIOCore
import NIOHTTP1

/// What a client connection needs to turn an intercepted CONNECT into a connection of its own:
/// once the 200 is written, the TLS server side with a minted certificate (put in place when
/// the client's hello is read: `ClientHelloGate`), the handshake watch,
/// the header and idle timers (now on the decrypted bytes, so that a 408 reaches the client
/// inside its TLS) and the HTTP handlers, whose requests go to `https://host:port` as tasks
/// with the CONNECT's stream task as their parent.
struct InterceptSetup {
    let interception: Interception
    let configuration: ListenerConfiguration
    let limits: NIOHTTPDecoderLimitConfiguration
    let clientAddress: String
    let clientProcess: ClientProcessSlot?
    let manager: SessionManager

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
        var validator = RequestValidator(
            via: self.configuration.viaName, maxHeaderBytes: self.configuration.maxHeaderBytes,
            connectPorts: self.configuration.allowedConnectPorts)
        validator.knownOrigin = KnownOrigin(host: request.host, port: request.port)
        try ProxyListener.addHTTPHandlers(
            to: pipeline, manager: self.manager, validator: validator, clientAddress: self.clientAddress,
            limits: self.limits, clientProcess: self.clientProcess,
            carrier: RequestCarrier(task: task, proxyUser: request.proxyUser))
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
