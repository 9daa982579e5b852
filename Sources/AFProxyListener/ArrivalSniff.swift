/// What a connection carries, from its first bytes, when afproxy knows its destination before
/// the client says anything (a SOCKS5 or captured connection): an HTTP/1.x request, read as
/// requests; a TLS ClientHello, whose server name names the connection; or anything else,
/// relayed as bytes. A plain value: `ArrivalSniffer` feeds it what the client sends.
struct ArrivalSniff {
    enum Verdict: Equatable {
        case http
        /// The ClientHello's `server_name`, when it sent one.
        case tls(serverName: String?)
        case other
    }

    private var scanner: TLSRecordScanner?
    private var method: [UInt8] = []
    private(set) var verdict: Verdict?

    /// Longer than any method a client sends (`PROPPATCH`, `UPDATEREDIRECTREF`): a token this
    /// long without its space is no request line.
    static let maxMethod = 24

    /// Reads the next bytes; answers the verdict once there is one (and then keeps it).
    mutating func read(_ bytes: some Collection<UInt8>) -> Verdict? {
        if let verdict = self.verdict { return verdict }
        guard let first = bytes.first else { return nil }
        if self.scanner == nil && self.method.isEmpty && first == 0x16 { self.scanner = TLSRecordScanner() }
        if var scanner = self.scanner {
            scanner.scan(bytes)
            self.scanner = scanner
            guard scanner.helloSettled else { return nil }
            let hello = scanner.firstMessage.flatMap(ClientHelloOffer.init(body:))
            self.verdict = hello == nil ? .other : .tls(serverName: hello?.serverName)
            return self.verdict
        }
        for byte in bytes {
            if byte == UInt8(ascii: " ") {
                self.verdict = self.method.isEmpty ? .other : .http
                return self.verdict
            }
            // Methods are tokens (RFC 9110 §9.1); the ones clients send are upper-case letters
            // and hyphens, which no TLS record or common binary protocol starts with.
            guard (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) || byte == UInt8(ascii: "-"),
                self.method.count < Self.maxMethod
            else {
                self.verdict = .other
                return self.verdict
            }
            self.method.append(byte)
        }
        return nil
    }

    /// The client sent all it will before a verdict (it half-closed, or went silent too long):
    /// what it sent goes on as bytes.
    mutating func settle() -> Verdict {
        if let verdict = self.verdict { return verdict }
        self.verdict = .other
        return .other
    }
}
