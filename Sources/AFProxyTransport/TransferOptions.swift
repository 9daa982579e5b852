import AFProxyRules

/// What sets one kind of exchange apart from another on the session. A proxied request is the
/// client's and goes out as it came: plain http (a client reaches an https origin through a
/// CONNECT tunnel), no redirect followed, curl's small receive buffer. A download task is
/// afproxy's own request: http or https verified against the trust store, redirects followed,
/// and a larger buffer, since there are only a few at a time and each may be fast.
package struct TransferOptions: Sendable, Equatable {
    package var allowsTLS: Bool
    package var followsRedirects: Bool
    /// curl's receive buffer; nil: the session's (`UpstreamConfiguration.receiveBufferSize`).
    package var receiveBufferSize: Int?
    /// A CA bundle trusted besides the system's.
    package var caFile: String?
    /// The public-key pins the origin's key must match (`sha256//…;sha256//…`), if its host has any.
    package var pins: String?
    /// The pins decide alone: the chain need not verify (`pin = … standalone`); the name is
    /// still checked, and a key off the pins still fails.
    package var pinsStandalone = false
    /// No verification at all: one download a person asked this of (`--insecure`).
    package var insecure: Bool

    package init(
        allowsTLS: Bool = false, followsRedirects: Bool = false, receiveBufferSize: Int? = nil, caFile: String? = nil,
        pins: String? = nil, insecure: Bool = false
    ) {
        self.allowsTLS = allowsTLS
        self.followsRedirects = followsRedirects
        self.receiveBufferSize = receiveBufferSize
        self.caFile = caFile
        self.pins = pins
        self.insecure = insecure
    }

    package static let proxy = TransferOptions()

    /// Debian's hashed directory of the system's trusted CAs (ca-certificates).
    package static let systemCADirectory = "/etc/ssl/certs"

    /// A request read inside an intercepted connection: the client's, as it came (no redirect
    /// followed, the proxy's buffer), to an https origin verified with the policy in force and
    /// its host's pins. Never `insecure`: the client cannot see the origin's certificate, so
    /// afproxy must not accept one the client would have refused.
    package static func intercepted(caFile: String?, pins: PinSet.HostPins?) -> TransferOptions {
        var options = TransferOptions(allowsTLS: true, caFile: caFile, pins: pins?.pins)
        options.pinsStandalone = pins?.standalone ?? false
        return options
    }

    /// 256 KiB: a quarter of the reads per MiB of curl's default, at no cost that matters for
    /// a handful of transfers.
    package static func download(caFile: String?, pins: String? = nil, insecure: Bool = false) -> TransferOptions {
        TransferOptions(
            allowsTLS: true, followsRedirects: true, receiveBufferSize: 256 << 10, caFile: caFile, pins: pins,
            insecure: insecure)
    }
}
