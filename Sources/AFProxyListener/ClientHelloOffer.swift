/// What a client's ClientHello offers that afproxy's answer depends on: whether it can take an
/// ECDSA certificate at all (older clients, TLS 1.2 stacks with RSA suites only, embedded ones,
/// cannot, and a handshake with them fails unless they are shown an RSA certificate), and the
/// name it asks for, which names a SOCKS5 or captured connection's task.
package struct ClientHelloOffer: Sendable, Equatable {
    /// TLS 1.3 in `supported_versions`.
    package var tls13: Bool
    /// An ECDHE_ECDSA cipher suite (TLS 1.2).
    package var ecdsaSuite: Bool
    /// The `signature_algorithms` extension, when sent.
    package var signatureSchemes: [UInt16]?
    /// The `host_name` of the `server_name` extension (RFC 6066 §3), lowercased; nil when the
    /// client sent none or one that is not a name.
    package var serverName: String?

    /// Whether the client can verify a certificate with an ECDSA key: in TLS 1.3 the
    /// signature schemes decide, in TLS 1.2 the cipher suite does too.
    package var acceptsECDSA: Bool {
        let schemes = self.signatureSchemes.map { $0.contains { Self.ecdsaSchemes.contains($0) } } ?? true
        return schemes && (self.tls13 || self.ecdsaSuite)
    }

    /// A DNS name as RFC 6066 allows it: letters, digits, hyphens and dots, at most 253 bytes.
    /// Anything else names nothing a task may be called by.
    static func hostName(_ bytes: [UInt8]) -> String? {
        guard (1...253).contains(bytes.count),
            bytes.allSatisfy({ byte in
                (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                    || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_")
            })
        else { return nil }
        return String(decoding: bytes, as: UTF8.self).lowercased()
    }

    static let ecdsaSchemes: Set<UInt16> = [0x0403, 0x0503, 0x0603, 0x0203]

    /// ECDHE_ECDSA suites (RFC 8422, 5289, 7905, 7251); the rest need an RSA key or none.
    static func isECDSASuite(_ suite: UInt16) -> Bool {
        (0xC006...0xC00A).contains(suite) || [0xC023, 0xC024, 0xC02B, 0xC02C, 0xCCA9].contains(suite)
            || (0xC0AC...0xC0AF).contains(suite)
    }

    package init(tls13: Bool, ecdsaSuite: Bool, signatureSchemes: [UInt16]?, serverName: String? = nil) {
        self.tls13 = tls13
        self.ecdsaSuite = ecdsaSuite
        self.signatureSchemes = signatureSchemes
        self.serverName = serverName
    }

    /// Reads a ClientHello's body (after its four-byte handshake header); nil when it is not one.
    package init?(body: [UInt8]) {
        var reader = ByteReader(body)
        guard reader.skip(2 + 32), let session = reader.u8(), reader.skip(Int(session)),
            let suitesLength = reader.u16(), suitesLength % 2 == 0, let suites = reader.bytes(Int(suitesLength)),
            let compression = reader.u8(), reader.skip(Int(compression))
        else { return nil }
        var ecdsaSuite = false
        for index in stride(from: 0, to: suites.count, by: 2) {
            if Self.isECDSASuite(UInt16(suites[index]) << 8 | UInt16(suites[index + 1])) { ecdsaSuite = true }
        }
        var tls13 = false
        var schemes: [UInt16]?
        var serverName: String?
        if let extensionsLength = reader.u16(),
            var extensions = reader.bytes(Int(extensionsLength)).map(ByteReader.init)
        {
            while let type = extensions.u16(), let length = extensions.u16(), let data = extensions.bytes(Int(length)) {
                var value = ByteReader(data)
                switch type {
                case 0x002B:  // supported_versions
                    if let count = value.u8(), let list = value.bytes(Int(count)) {
                        tls13 = stride(from: 0, to: list.count - 1, by: 2).contains {
                            list[$0] == 3 && list[$0 + 1] == 4
                        }
                    }
                case 0x000D:  // signature_algorithms
                    if let count = value.u16(), let list = value.bytes(Int(count)) {
                        schemes = stride(from: 0, to: list.count - 1, by: 2).map {
                            UInt16(list[$0]) << 8 | UInt16(list[$0 + 1])
                        }
                    }
                case 0x0000:  // server_name: a list of (type, name); type 0 is host_name
                    if value.skip(2), value.u8() == 0, let length = value.u16(), let name = value.bytes(Int(length)) {
                        serverName = Self.hostName(name)
                    }
                default: break
                }
            }
        }
        self.init(tls13: tls13, ecdsaSuite: ecdsaSuite, signatureSchemes: schemes, serverName: serverName)
    }
}

/// Big-endian reads over a byte array that answer nil past its end.
private struct ByteReader {
    private let bytes: [UInt8]
    private var index = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    mutating func skip(_ count: Int) -> Bool { self.bytes(count) != nil }

    mutating func u8() -> UInt8? { self.bytes(1)?.first }

    mutating func u16() -> UInt16? { self.bytes(2).map { UInt16($0[0]) << 8 | UInt16($0[1]) } }

    mutating func bytes(_ count: Int) -> [UInt8]? {
        guard count >= 0, self.bytes.count - self.index >= count else { return nil }
        defer { self.index += count }
        return Array(self.bytes[self.index..<self.index + count])
    }
}
