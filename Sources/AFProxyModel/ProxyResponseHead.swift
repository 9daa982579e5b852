/// A response head received from upstream, as the origin sent it (its framing checked by
/// `ResponseFraming`): the final head, or an interim 1xx one.
package struct ProxyResponseHead: Sendable, Codable, Equatable {
    package var status: Int
    package var reason: String
    /// "1.1", "1.0", "2"
    package var version: String
    package var headers: HTTPHeaderList

    package init(status: Int, reason: String, version: String, headers: HTTPHeaderList) {
        self.status = status
        self.reason = reason
        self.version = version
        self.headers = headers
    }

    /// The body length the head announces, or nil when the body ends with the connection or the
    /// last chunk.
    package var contentLength: Int64? {
        guard self.headers.first("transfer-encoding") == nil, let value = self.headers.first("content-length")
        else { return nil }
        return Int64(value)
    }

    /// The transfer codings the origin applied, in order, lower-cased (`["gzip", "chunked"]`).
    /// The client must receive all but the hop's own chunked framing, which is redone per hop.
    package var transferCodings: [String] {
        self.headers.values("transfer-encoding").flatMap { $0.split(separator: ",") }
            .map { $0.trimmingSpaces().lowercased() }.filter { !$0.isEmpty }
    }
}
