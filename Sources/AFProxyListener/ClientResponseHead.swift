import AFProxyModel
import NIOHTTP1

/// The origin's response head as one client gets it: the client's HTTP version, the origin's
/// status code and reason phrase as they came, hop-by-hop fields removed, our `Via` added, and
/// the body framed for this hop (RFC 9112 §6). The origin's head reached here with its framing
/// checked (`ResponseFraming`), so only the choice for this hop is made here.
///
/// The proxy's pipelines frame bodies by this choice alone (`ClientResponseEncoder`): NIO's
/// automatic framing dropped a 304's `Content-Length` and turned `Transfer-Encoding: gzip,
/// chunked` into `chunked`, sending gzip bytes as if they were the body.
struct ClientResponseHead: Equatable {
    /// How the body travels to the client.
    enum Framing: Equatable {
        /// No body (HEAD, 1xx, 204, 304).
        case none
        /// The origin's Content-Length.
        case length
        /// `Transfer-Encoding: [CODINGS, ]chunked`: the connection handler writes the chunks.
        case chunked
        /// The body ends when the connection closes (an HTTP/1.0 client, no length).
        case close
        /// HTTP/2: DATA frames carry the body and the stream's end ends it, so nothing of ours
        /// frames it, whether or not a length was given.
        case frames
    }

    var head: HTTPResponseHead
    var framing: Framing
    /// The connection closes after this response.
    var closeAfter: Bool

    /// Fails with the reason when this client cannot receive the response at all: an HTTP/1.0
    /// client cannot undo a transfer coding (RFC 9112 §6.1 forbids sending it one).
    static func make(
        _ origin: ProxyResponseHead, requestIsHead: Bool, clientVersion: HTTPVersion, keepAlive: Bool, via: String
    ) -> Result<ClientResponseHead, ProxyRefusal> {
        var headers = HTTPHeaders()
        headers.reserveCapacity(origin.headers.count + 3)
        var received: [String] = []
        let named = HopByHopHeaders.connectionNamed(in: origin.headers)
        for field in origin.headers where !HopByHopHeaders.isHopByHop(field, named: named) {
            if field.hasName("via") {
                received.append(field.value)
            } else if !field.hasName("content-length") {
                headers.add(name: field.name, value: field.value)
            }
        }
        let own = "\(origin.version) \(via)"
        headers.add(name: "Via", value: received.isEmpty ? own : (received + [own]).joined(separator: ", "))

        let modern = clientVersion.isHTTP11OrLater
        // An HTTP/2 stream: no connection-specific field may go (RFC 9113 §8.2.2), and its
        // end is the stream's, never the connection's.
        let stream = clientVersion.major >= 2
        let codings = origin.transferCodings
        // The codings the origin applied beyond its own chunked framing of this hop.
        let applied = codings.last == "chunked" ? Array(codings.dropLast()) : codings
        let length = origin.headers.first("content-length")
        let bodiless =
            requestIsHead || origin.status == 204 || origin.status == 304 || (100..<200).contains(origin.status)
        var closeAfter = !keepAlive
        let framing: Framing
        if bodiless {
            // A HEAD or 304 answer may say what the body would have been (RFC 9110 §8.6, RFC 9112 §6.1).
            if let length, origin.status != 204 { headers.add(name: "Content-Length", value: length) }
            // Transfer-Encoding only on a HEAD answer: a client may take a 304's `chunked` as
            // the start of a body (RFC 9112 §6.1 makes it a MAY there); 204 and 1xx must not
            // carry it at all.
            if !codings.isEmpty && modern && requestIsHead && !stream {
                headers.add(name: "Transfer-Encoding", value: codings.joined(separator: ", "))
            }
            framing = .none
        } else if let length {
            headers.add(name: "Content-Length", value: length)
            framing = .length
        } else if stream {
            guard applied.isEmpty else {
                let message =
                    "the response uses the transfer coding \(applied.joined(separator: ", ")), "
                    + "which HTTP/2 cannot carry"
                return .failure(ProxyRefusal(.badGateway, message))
            }
            framing = .frames
        } else if modern {
            headers.add(name: "Transfer-Encoding", value: (applied + ["chunked"]).joined(separator: ", "))
            framing = .chunked
        } else if applied.isEmpty {
            closeAfter = true  // close-delimited: the only framing an HTTP/1.0 client understands
            framing = .close
        } else {
            let message =
                "the response uses the transfer coding \(applied.joined(separator: ", ")), "
                + "which an HTTP/1.0 client cannot receive"
            return .failure(ProxyRefusal(.badGateway, message))
        }
        // On a stream, closing after it resets that stream alone, and says nothing in a field.
        if !modern {
            if !closeAfter { headers.add(name: "Connection", value: "keep-alive") }
        } else if closeAfter && !stream {
            headers.add(name: "Connection", value: "close")
        }
        let status = Self.status(of: origin)
        return .success(
            ClientResponseHead(
                head: HTTPResponseHead(version: clientVersion, status: status, headers: headers),
                framing: framing, closeAfter: closeAfter))
    }

    /// An interim 1xx head for a client that may receive one (HTTP/1.1; RFC 9110 §15.2). Whether
    /// a 100 goes on is the connection's call: once per exchange, and not after afproxy's own.
    static func interim(_ origin: ProxyResponseHead, clientVersion: HTTPVersion, via: String) -> HTTPResponseHead? {
        guard clientVersion.isHTTP11OrLater else { return nil }
        var headers = HTTPHeaders()
        let named = HopByHopHeaders.connectionNamed(in: origin.headers)
        for field in origin.headers where !HopByHopHeaders.isHopByHop(field, named: named) {
            headers.add(name: field.name, value: field.value)
        }
        let status = Self.status(of: origin)
        return HTTPResponseHead(version: clientVersion, status: status, headers: headers)
    }

    /// The origin's status with its reason phrase as it came; an HTTP/2 or HTTP/3 message has
    /// none (RFC 9113 §8.3.2), so an HTTP/1.1 client gets the standard one for the code.
    static func status(of origin: ProxyResponseHead) -> HTTPResponseStatus {
        if origin.reason.isEmpty, !origin.version.contains(".") {
            // 103 is missing from NIO's table (adding it is a major version there).
            let standard =
                origin.status == 103 ? "Early Hints" : HTTPResponseStatus(statusCode: origin.status).reasonPhrase
            return .custom(code: UInt(origin.status), reasonPhrase: standard)
        }
        return .custom(code: UInt(origin.status), reasonPhrase: origin.reason)
    }
}

extension HTTPVersion {
    /// HTTP/1.1 or a later 1.x or 2+: the client understands chunked framing and interim heads.
    fileprivate var isHTTP11OrLater: Bool {
        (self.major, self.minor) >= (1, 1)
    }
}
