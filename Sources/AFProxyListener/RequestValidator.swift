import AFProxyModel
import AFProxyRules
import NIOHTTP1

/// Turns a parsed request head into the request sent upstream, or a refusal: absolute-form
/// `http://` URLs only, unambiguous framing (no request smuggling), hop-by-hop fields removed,
/// `Host` taken from the URL (RFC 9112 §3.2.2), `Via` added, and loops through ourselves refused.
/// A CONNECT goes through `validateConnect` instead.
package struct RequestValidator: Sendable {
    package var via: String
    package var maxHeaderBytes: Int
    /// The ports a CONNECT may reach.
    package var connectPorts: ConnectPortPolicy
    /// Proxy authentication, when `proxy-auth-file` is set; `ProxyAuthGate` verified new
    /// credentials before the head got here.
    package var authenticator: ProxyAuthenticator?
    /// Inside an intercepted, SOCKS5 or captured connection: the origin its requests go to, in
    /// origin form (`KnownOrigin`). Proxy
    /// authentication was the CONNECT's or the SOCKS5 handshake's (`authenticator` is nil there).
    var knownOrigin: KnownOrigin?
    /// The requests come from the streams of an HTTP/2 connection (an intercepted client that
    /// chose `h2`): their heads say HTTP/2.0.
    var http2 = false

    package init(
        via: String, maxHeaderBytes: Int, connectPorts: ConnectPortPolicy = .default,
        authenticator: ProxyAuthenticator? = nil
    ) {
        self.via = via
        self.maxHeaderBytes = maxHeaderBytes
        self.connectPorts = connectPorts
        self.authenticator = authenticator
    }

    package func validate(_ head: HTTPRequestHead, client: String) -> Result<ProxyRequest, ProxyRefusal> {
        if let refusal = self.commonRefusal(head) { return .failure(refusal) }
        let user: String?
        switch self.authenticatedUser(head) {
        case .success(let authenticated): user = authenticated
        case .failure(let refusal): return .failure(refusal)
        }
        let url: AbsoluteURL
        let parsed =
            self.knownOrigin.map { $0.url(for: head.uri, host: head.headers.first(name: "host")) }
            ?? AbsoluteURL.parse(head.uri)
        switch parsed {
        case .success(let parsed): url = parsed
        case .failure(let refusal): return .failure(refusal)
        }

        let body: ProxyRequest.Body
        switch Self.framing(of: head.headers) {
        case .success(let framing): body = framing
        case .failure(let refusal): return .failure(refusal)
        }

        let expectations = head.headers["expect"]
        if let expect = expectations.first, expectations.count > 1 || expect.lowercased() != "100-continue" {
            return .failure(ProxyRefusal(.expectationFailed, "unsupported Expect: \(expect)"))
        }

        let received = head.headers.map { HTTPHeaderField($0.name, $0.value) }
        let via: String
        switch self.receivedVia(received) {
        case .success(let joined): via = joined
        case .failure(let refusal): return .failure(refusal)
        }
        // `Expect: 100-continue` goes on to the origin, which decides (curl waits a second for
        // its 100, then sends anyway), where there is a body to wait for and the client speaks
        // HTTP/1.1 (RFC 9110 §10.1.1: a 1.0 request's expectation is ignored).
        let forwardsExpect =
            body != .none && body != .length(0) && (head.version.major, head.version.minor) >= (1, 1)
        // `Host` first, the client's end-to-end fields in their order, our `Via` last: built in
        // one array of its final size (filtering, inserting and appending made five a request).
        let named = HopByHopHeaders.connectionNamed(in: received)
        var forwarded = HTTPHeaderList()
        forwarded.reserveCapacity(received.count + 2)
        forwarded.append(HTTPHeaderField("Host", url.authority))
        for field in received where !HopByHopHeaders.isHopByHop(field, named: named) {
            // Trailer: curl sends the request body without the client's trailer section.
            guard
                !(field.hasName("content-length") || (field.hasName("expect") && !forwardsExpect)
                    || field.hasName("host") || field.hasName("via") || field.hasName("trailer"))
            else { continue }
            forwarded.append(field)
        }
        let ownVia = "\(head.version.major).\(head.version.minor) \(self.via)"
        forwarded.append(HTTPHeaderField("Via", via.isEmpty ? ownVia : "\(via), \(ownVia)"))

        let method = head.method.rawValue
        var request = ProxyRequest(
            method: method, url: url.text, headers: forwarded, body: body, client: client, proxyUser: user)
        request.clientHTTPVersion = head.version.major == 2 ? "2" : "\(head.version.major).\(head.version.minor)"
        return .success(request)
    }

    /// What any request is refused for before its target is looked at, CONNECT or not: an HTTP
    /// version other than 1.x (or 2 on an HTTP/2 stream), a header section over `maxHeaderBytes`.
    func commonRefusal(_ head: HTTPRequestHead) -> ProxyRefusal? {
        guard head.version.major == 1 || (self.http2 && head.version.major == 2) else {
            return ProxyRefusal(.httpVersionNotSupported, "only HTTP/1.0 and HTTP/1.1 are spoken here")
        }
        var headerBytes = head.uri.utf8.count
        for (name, value) in head.headers { headerBytes += name.utf8.count + value.utf8.count + 4 }
        guard headerBytes <= self.maxHeaderBytes else {
            return ProxyRefusal(
                .requestHeaderFieldsTooLarge, "the request header section exceeds \(self.maxHeaderBytes) bytes")
        }
        return nil
    }

    /// The `proxy-auth-file` user the request authenticated as (nil without proxy
    /// authentication), or 407 unless it carries credentials of a user that were verified. The
    /// connection stays open (after the body is dropped), for the client to try again.
    func authenticatedUser(_ head: HTTPRequestHead) -> Result<String?, ProxyRefusal> {
        guard let authenticator = self.authenticator else { return .success(nil) }
        let reason: String
        switch authenticator.verdict(header: head.headers["proxy-authorization"].first) {
        case .allowed(let user): return .success(user)
        case .refused(let why): reason = why
        case .needsVerification: reason = "wrong user name or password"
        }
        var refusal = ProxyRefusal(.proxyAuthenticationRequired, reason, closeConnection: false)
        refusal.challenge = true
        return .failure(refusal)
    }

    /// The `Via` a request arrived with, all its fields joined, or 508 when one of its entries
    /// was received by this proxy: the request came back to us (a proxy chain that loops).
    /// Checked last, after the request's own checks, for CONNECT and the other methods alike.
    func receivedVia(_ received: HTTPHeaderList) -> Result<String, ProxyRefusal> {
        let via = received.values("via").joined(separator: ", ")
        if ViaEntries.contains(via, receivedBy: self.via) {
            return .failure(ProxyRefusal(.loopDetected, "the request already passed through this proxy (Via: \(via))"))
        }
        return .success(via)
    }

    /// RFC 9112 §6.3: Transfer-Encoding with Content-Length, a Transfer-Encoding that does not end in
    /// chunked, an invalid Content-Length or differing ones are refused and the connection closed.
    static func framing(of headers: HTTPHeaders) -> Result<ProxyRequest.Body, ProxyRefusal> {
        let lengths = headers["content-length"].flatMap { $0.split(separator: ",", omittingEmptySubsequences: false) }
            .map { $0.trimmingSpaces() }
        let codings = headers["transfer-encoding"].flatMap { $0.split(separator: ",") }
            .map { $0.trimmingSpaces().lowercased() }
        if !codings.isEmpty {
            guard lengths.isEmpty else {
                return .failure(ProxyRefusal(.badRequest, "Content-Length together with Transfer-Encoding is refused"))
            }
            guard codings.last == "chunked" else {
                return .failure(ProxyRefusal(.badRequest, "Transfer-Encoding must end with chunked"))
            }
            return .success(.streamed)
        }
        guard let first = lengths.first else { return .success(.none) }
        guard lengths.allSatisfy({ $0 == first }) else {
            return .failure(ProxyRefusal(.badRequest, "differing Content-Length values"))
        }
        guard !first.isEmpty, first.utf8.allSatisfy({ (48...57).contains($0) }), let length = Int64(first) else {
            return .failure(ProxyRefusal(.badRequest, "invalid Content-Length: \(first)"))
        }
        return .success(.length(length))
    }
}
