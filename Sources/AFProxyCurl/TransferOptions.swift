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
    /// A CA bundle to verify TLS origins with instead of the system's.
    package var caFile: String?

    package init(
        allowsTLS: Bool = false, followsRedirects: Bool = false, receiveBufferSize: Int? = nil, caFile: String? = nil
    ) {
        self.allowsTLS = allowsTLS
        self.followsRedirects = followsRedirects
        self.receiveBufferSize = receiveBufferSize
        self.caFile = caFile
    }

    package static let proxy = TransferOptions()

    /// 256 KiB: a quarter of the reads per MiB of curl's default, at no cost that matters for
    /// a handful of transfers.
    package static func download(caFile: String?) -> TransferOptions {
        TransferOptions(allowsTLS: true, followsRedirects: true, receiveBufferSize: 256 << 10, caFile: caFile)
    }
}
