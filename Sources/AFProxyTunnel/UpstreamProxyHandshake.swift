import AFProxyModel

/// The opening of a tunnel through the upstream proxy, on the fresh connection to it: HTTP's
/// `CONNECT host:port` (RFC 9110 §9.3.6) or SOCKS5 with the host's name (RFC 1928, with RFC
/// 1929's user and password when there are credentials). A plain value: bytes in, what to do
/// out, tested without sockets (`UpstreamProxyHandshakeHandler` does the I/O).
///
/// The proxy's answer is read up to its end and no further: what follows it is the origin's,
/// and goes to the tunnel (`established(leftover:)`).
struct UpstreamProxyHandshake {
    enum Action: Equatable {
        /// Send these bytes, then wait for more of the answer.
        case send([UInt8])
        /// Wait for more of the answer.
        case wait
        /// The tunnel is open; `leftover` came after the answer and belongs to the tunnel.
        case established(leftover: [UInt8])
        case failed(TaskFailure)
    }

    /// An HTTP answer head larger than this is refused (Squid's is under 4 KiB).
    static let maxHeadBytes = 16 * 1024

    private enum Stage {
        case httpAnswer
        case socksMethod
        case socksAuth
        case socksReply
        case done
    }

    private let proxy: UpstreamProxy
    private let host: String
    private let port: Int
    private var stage: Stage
    private var received: [UInt8] = []

    init(proxy: UpstreamProxy, host: String, port: Int) {
        self.proxy = proxy
        self.host = host
        self.port = port
        self.stage = proxy.scheme == .http ? .httpAnswer : .socksMethod
    }

    /// The first bytes to send.
    func opening() -> [UInt8] {
        switch self.proxy.scheme {
        case .http:
            let authority = EndpointText.of(host: self.host, port: self.port)
            var head = "CONNECT \(authority) HTTP/1.1\r\nHost: \(authority)\r\n"
            if let authorization = self.proxy.basicAuthorization { head += "Proxy-Authorization: \(authorization)\r\n" }
            return Array((head + "\r\n").utf8)
        case .socks5h:
            // No authentication (0), and user/password (2) when there are credentials.
            return self.proxy.credentials == nil ? [5, 1, 0] : [5, 2, 0, 2]
        }
    }

    /// The proxy's answer so far (a part of it, or more than all of it).
    mutating func receive(_ bytes: some Sequence<UInt8>) -> Action {
        guard self.stage != .done else { return .wait }
        self.received.append(contentsOf: bytes)
        let action: Action
        switch self.stage {
        case .httpAnswer: action = self.httpAnswer()
        case .socksMethod: action = self.socksMethod()
        case .socksAuth: action = self.socksAuth()
        case .socksReply: action = self.socksReply()
        case .done: action = .wait
        }
        switch action {
        case .established, .failed: self.stage = .done
        case .send, .wait: break
        }
        return action
    }

    /// The proxy closed the connection before its answer was complete.
    func closed() -> TaskFailure {
        .upstreamProxyRefused("upstream proxy \(self.proxy) closed the connection before answering the tunnel")
    }

    // MARK: HTTP

    private mutating func httpAnswer() -> Action {
        guard let end = Self.headEnd(self.received) else {
            if self.received.count > Self.maxHeadBytes {
                return .failed(
                    .upstreamProxyRefused("upstream proxy \(self.proxy) answered CONNECT with an oversized head"))
            }
            return .wait
        }
        guard end <= Self.maxHeadBytes else {
            return .failed(
                .upstreamProxyRefused("upstream proxy \(self.proxy) answered CONNECT with an oversized head"))
        }
        let lineEnd = self.received.firstIndex(of: UInt8(ascii: "\n"))!
        let statusLine = String(decoding: self.received[..<lineEnd], as: UTF8.self)
            .trimmingSuffix(while: { $0 == "\r" })
        guard let status = Self.status(of: statusLine) else {
            return .failed(
                .upstreamProxyRefused("upstream proxy \(self.proxy) answered CONNECT with something not HTTP"))
        }
        let what = "upstream proxy \(self.proxy) answered CONNECT \(EndpointText.of(host: self.host, port: self.port))"
        switch status {
        case 200..<300:
            return .established(leftover: Array(self.received[end...]))
        case 407:
            return .failed(
                .upstreamProxyAuth(
                    "\(what) with 407"
                        + (self.proxy.credentials == nil
                            ? ": it wants credentials, none are configured" : ": it refused the credentials")))
        default:
            let reason = statusLine.split(separator: " ", maxSplits: 2).dropFirst().joined(separator: " ")
            return .failed(.upstreamProxyRefused("\(what) with \(Self.printable(reason))"))
        }
    }

    /// The proxy's words, printable ASCII only and short, for a message.
    private static func printable(_ text: String) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.filter { (0x20..<0x7F).contains($0.value) }.prefix(120)))
    }

    /// The index just after the blank line that ends the head (`\r\n\r\n`, or bare `\n\n`).
    private static func headEnd(_ bytes: [UInt8]) -> Int? {
        var index = 0
        while let newline = bytes[index...].firstIndex(of: UInt8(ascii: "\n")) {
            let next = newline + 1
            if next < bytes.count, bytes[next] == UInt8(ascii: "\n") { return next + 1 }
            if next + 1 < bytes.count, bytes[next] == UInt8(ascii: "\r"), bytes[next + 1] == UInt8(ascii: "\n") {
                return next + 2
            }
            index = next
        }
        return nil
    }

    /// `HTTP/1.x NNN …`'s status.
    private static func status(of line: String) -> Int? {
        let parts = line.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count >= 2, parts[0] == "HTTP/1.1" || parts[0] == "HTTP/1.0", parts[1].utf8.count == 3,
            parts[1].utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) })
        else { return nil }
        return Int(parts[1])
    }

    // MARK: SOCKS5

    private mutating func socksMethod() -> Action {
        guard self.received.count >= 2 else { return .wait }
        let (version, method) = (self.received[0], self.received[1])
        self.received.removeFirst(2)
        guard version == 5 else { return .failed(self.notSocks()) }
        switch method {
        case 0:
            self.stage = .socksReply
            return self.socksConnect()
        case 2 where self.proxy.credentials != nil:
            let credentials = self.proxy.credentials!
            let user = Array(credentials.user.utf8)
            let password = Array(credentials.password.utf8)
            self.stage = .socksAuth
            return .send([1, UInt8(user.count)] + user + [UInt8(password.count)] + password)
        case 0xFF where self.proxy.credentials == nil:
            return .failed(.upstreamProxyAuth("upstream proxy \(self.proxy) wants credentials, none are configured"))
        default:
            return .failed(.upstreamProxyRefused("upstream proxy \(self.proxy) offers no SOCKS5 method we speak"))
        }
    }

    private mutating func socksAuth() -> Action {
        guard self.received.count >= 2 else { return .wait }
        let status = self.received[1]
        self.received.removeFirst(2)
        guard status == 0 else {
            return .failed(.upstreamProxyAuth("upstream proxy \(self.proxy) refused the credentials"))
        }
        self.stage = .socksReply
        return self.socksConnect()
    }

    private func socksConnect() -> Action {
        // The name goes to the proxy as it is (address type 3), an address literal as one (1, 4).
        var request: [UInt8] = [5, 1, 0]
        if let address = IPAddress(self.host) {
            request += [address.isIPv4 ? 1 : 4] + address.bytes
        } else {
            let name = Array(self.host.utf8.prefix(255))
            request += [3, UInt8(name.count)] + name
        }
        request += [UInt8(self.port >> 8), UInt8(self.port & 0xFF)]
        return .send(request)
    }

    private mutating func socksReply() -> Action {
        guard self.received.count >= 5 else { return .wait }
        guard self.received[0] == 5 else { return .failed(self.notSocks()) }
        let reply = self.received[1]
        let addressLength: Int
        switch self.received[3] {
        case 1: addressLength = 4
        case 4: addressLength = 16
        case 3: addressLength = 1 + Int(self.received[4])
        default: return .failed(self.notSocks())
        }
        let total = 4 + addressLength + 2
        guard self.received.count >= total else { return .wait }
        guard reply == 0 else {
            return .failed(
                .upstreamProxyRefused(
                    "upstream proxy \(self.proxy) refused the tunnel to \(EndpointText.of(host: self.host, port: self.port)): "
                        + Self.socksReason(reply)))
        }
        return .established(leftover: Array(self.received[total...]))
    }

    private func notSocks() -> TaskFailure {
        .upstreamProxyRefused("upstream proxy \(self.proxy) answered with something not SOCKS5")
    }

    /// RFC 1928 §6.
    private static func socksReason(_ reply: UInt8) -> String {
        switch reply {
        case 1: "general failure"
        case 2: "not allowed by its rules"
        case 3: "network unreachable"
        case 4: "host unreachable"
        case 5: "connection refused"
        case 6: "TTL expired"
        case 7: "command not supported"
        case 8: "address type not supported"
        default: "reply \(reply)"
        }
    }
}

extension String {
    fileprivate func trimmingSuffix(while predicate: (Character) -> Bool) -> String {
        var text = Substring(self)
        while let last = text.last, predicate(last) { text = text.dropLast() }
        return String(text)
    }
}
