import AFProxyModel
import NIOCore

/// What a tunnel opened for a protocol upgrade (`StreamUpgrade`) does beyond a CONNECT's: it
/// sends the request head first and reads the origin's answer for its status; the client's
/// bytes wait for a 101 and are dropped after any other answer; and it reaches a `wss://`
/// origin over verified TLS.
package struct TunnelUpgrade: Sendable {
    /// The request head, sent upstream as the tunnel's first bytes.
    package var head: String
    package var tls: TunnelTLS?
    /// Reads the messages that pass, for a record rule that names the task; nil (the usual
    /// case): nothing reads them.
    package var recorder: WebSocketRecorder?

    package init(head: String, tls: TunnelTLS? = nil, recorder: WebSocketRecorder? = nil) {
        self.head = head
        self.tls = tls
        self.recorder = recorder
    }
}

/// How a tunnel's upstream connection is verified: as an intercepted request's curl transfer is
/// (the system's CAs and `tls-ca-file`, the host's pins, the name), by handlers the daemon
/// makes (`TunnelTLSMaker`), so that this module needs no TLS library.
package struct TunnelTLS: Sendable {
    /// The name sent as SNI and checked against the certificate.
    package var host: String
    package var caFile: String?
    /// `sha256//BASE64` pins of the origin's public key; empty: none.
    package var pins: [String]
    /// The pins decide alone: the chain need not verify.
    package var pinsStandalone: Bool
    package var maker: any TunnelTLSMaker

    package init(host: String, caFile: String?, pins: [String], pinsStandalone: Bool, maker: any TunnelTLSMaker) {
        self.host = host
        self.caFile = caFile
        self.pins = pins
        self.pinsStandalone = pinsStandalone
        self.maker = maker
    }
}

/// Makes the TLS client side of a tunnel's upstream connection.
package protocol TunnelTLSMaker: Sendable {
    /// On the connection's event loop: the handlers to add to its pipeline, in order. They fire
    /// `TLSUserEvent.handshakeCompleted` once the origin is verified, or an error.
    func clientHandlers(for tls: TunnelTLS) throws -> [any ChannelHandler]
    /// What the task records for a handshake that failed with `error`.
    func failure(for error: any Error, host: String) -> TaskFailure
}
