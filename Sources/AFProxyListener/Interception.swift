import AFProxyModel
import AFProxyRules
import FoundationEssentials
import NIOCore

/// What the listener needs of the local CA (the daemon's `InterceptAuthority`): the TLS server
/// side of one intercepted connection, or nil while the CA is not ready (never prepared, or its
/// key unreadable), in which case the CONNECT stays a plain tunnel. The handler is any
/// `ChannelHandler` here, so that the listener does not link swift-nio-ssl (and BoringSSL with
/// it) itself: its fuzz targets build without it. What it needs of TLS is NIOTLS's handshake
/// event, which is in swift-nio.
package protocol InterceptCertificates: Sendable {
    /// Whether the CA is ready to mint: asked before a CONNECT is answered.
    var isReady: Bool { get }
    /// On the client connection's event loop: answers the client's handshake with a leaf
    /// certificate for the name it asked for (SNI), or `connectHost` without SNI; with an RSA key
    /// when `rsa` (a client whose hello offers no ECDSA), else P-256. nil when it cannot (for
    /// RSA: before `prepareRSA` completed).
    func makeServerHandler(connectHost: String, rsa: Bool) -> (any ChannelHandler)?
    /// Completes on `eventLoop` once RSA leaves can be made: at once when their key is made,
    /// else after making it off the event loops (slow, once).
    func prepareRSA(on eventLoop: any EventLoop) -> EventLoopFuture<Void>
}

/// Which CONNECTs the listener intercepts, and how: the intercept rules of the rule book, the
/// CA's certificates and what a refusal of them does to the rules (auto-passthrough).
package struct Interception: Sendable {
    package let rules: LiveRules<InterceptRuleSet>
    package let certificates: any InterceptCertificates

    package init(rules: LiveRules<InterceptRuleSet>, certificates: any InterceptCertificates) {
        self.rules = rules
        self.certificates = certificates
    }

    /// Whether a CONNECT to `host` is intercepted now (one atomic load when no rule is set).
    func intercepts(host: String) -> Bool {
        self.rules.isActive && self.rules.ruleSet.intercepts(host: host, now: Date()) && self.certificates.isReady
    }

    /// The client refused the certificate minted for `host`: with auto-passthrough on, its next
    /// CONNECTs are plain tunnels for a while. Answers whether that happened.
    @discardableResult
    func clientRefused(host: String, reason: String) -> Bool {
        self.rules.change { $0.clientRefused(host: host, reason: reason, now: Date()) } != nil
    }

    /// The client went away right after the certificate minted for `host` without a word: on a
    /// repeat soon after, the host is passed through as on a refusal. Answers whether it is.
    @discardableResult
    func clientLikelyRejected(host: String, reason: String) -> Bool {
        self.rules.change { $0.clientLikelyRejected(host: host, reason: reason, now: Date()) } != nil
    }
}
