// The request path as a client drives it: raw bytes through NIO's request decoder, configured as
// the listener configures it, then `RequestValidator.validate` / `validateConnect`; and the raw
// bytes as a request target straight into `AbsoluteURL.parse` and `ConnectTarget.parse`, which
// NIO's decoder would otherwise shield from most byte values. The checks say what must hold of
// anything the proxy forwards upstream or opens a tunnel to.
//
// `@testable import` reaches the internal parsers without making them public; it needs modules
// built for testing, which debug builds are. A release build gets a stub (below).
#if DEBUG
@testable import AFProxyListener
import AFProxyModel
import FuzzSupport
import NIOCore
import NIOEmbedded
import NIOHTTP1

enum FuzzRequest {
    static let configuration = ListenerConfiguration()
    static let validator = RequestValidator(
        via: Self.configuration.viaName, maxHeaderBytes: Self.configuration.maxHeaderBytes,
        connectPorts: Self.configuration.allowedConnectPorts)

    static func run(_ input: UnsafeRawBufferPointer) {
        let target = String(decoding: input, as: UTF8.self)
        Self.checkAbsoluteURL(target)
        Self.checkConnectTarget(target)
        for head in Self.decodeHeads(input) {
            if head.method == .CONNECT {
                Self.checkConnect(head)
            } else {
                Self.checkRequest(head)
            }
        }
    }

    /// The request heads NIO's decoder yields for `input`, as the listener's pipeline would get
    /// them (its limits as `ProxyListener.decoderLimits` sets them; bytes after a CONNECT kept for
    /// the tunnel). A parse error ends the stream: the listener answers 400 and closes.
    static func decodeHeads(_ input: UnsafeRawBufferPointer) -> [HTTPRequestHead] {
        var limits = NIOHTTPDecoderLimitConfiguration()
        limits.maxHeaderListSize = min(Self.configuration.maxHeaderBytes, ListenerConfiguration.headerBytesCeiling)
        limits.maxHeaderFieldSize = limits.maxHeaderListSize
        let channel = EmbeddedChannel()
        defer { _ = try? channel.finish() }
        let decoder = HTTPRequestDecoder(leftOverBytesStrategy: .forwardBytes, limitConfiguration: limits)
        try! channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(decoder))
        var buffer = channel.allocator.buffer(capacity: input.count)
        buffer.writeBytes(input)
        _ = try? channel.writeInbound(buffer)
        var heads: [HTTPRequestHead] = []
        while let part = try? channel.readInbound(as: HTTPServerRequestPart.self) {
            if case .head(let head) = part { heads.append(head) }
        }
        return heads
    }

    static func checkRequest(_ head: HTTPRequestHead) {
        guard case .success(let request) = Self.validator.validate(head, client: "fuzz") else { return }
        check(request.url.hasPrefix("http://"), "forwarded URL \(request.url.debugDescription) is not http://")
        check(
            !request.url.utf8.contains { $0 <= 0x20 || $0 == 0x7F },
            "forwarded URL \(request.url.debugDescription) holds a space or control byte")
        // The forwarded URL is already normal: parsing it again gives it back.
        switch AbsoluteURL.parse(request.url) {
        case .success(let again):
            check(
                again.text == request.url,
                "\(request.url.debugDescription) reparses as \(again.text.debugDescription)")
        case .failure(let refusal):
            check(false, "forwarded URL \(request.url.debugDescription) does not reparse: \(refusal.message)")
        }
        check(FuzzHarness.isToken(request.method), "method \(request.method.debugDescription)")
        Self.checkFields(request.headers, "forwarded request")
        let names = request.headers.map { $0.name.lowercased() }
        check(
            names.first == "host" && names.filter { $0 == "host" }.count == 1,
            "Host is not the first and only: \(names)")
        check(
            names.last == "via" && names.filter { $0 == "via" }.count == 1,
            "Via is not the one last field: \(names)")
        for name in names {
            // Framing is set by the session from `body`; hop-by-hop fields are this hop's.
            check(
                !HopByHopHeaders.fixed.contains(name) && !["content-length", "trailer"].contains(name),
                "forwarded a \(name) field")
        }
        // `Expect` goes on only as one `100-continue`, for a body, from an HTTP/1.1 client: the
        // origin decides whether the client is to send it (RFC 9110 §10.1.1).
        let expectations = request.headers.filter { $0.name.lowercased() == "expect" }
        if !expectations.isEmpty {
            let hasBody = request.body != .none && request.body != .length(0)
            check(
                expectations.count == 1 && expectations[0].value.lowercased() == "100-continue" && hasBody
                    && (head.version.major, head.version.minor) >= (1, 1),
                "forwarded an Expect field that is not one 100-continue for a body from HTTP/1.1: \(expectations)")
        }
        for token in head.headers["connection"].flatMap({ $0.split(separator: ",") }) {
            let named = String(token).trimmingBlanks().lowercased()
            check(
                named == "host" || named == "via" || !names.contains(named),
                "forwarded \(named), named by Connection")
        }
        if case .length(let length) = request.body { check(length >= 0, "negative body length \(length)") }
        let lengths = head.headers["content-length"].flatMap {
            $0.split(separator: ",", omittingEmptySubsequences: false)
        }
        check(
            lengths.isEmpty || head.headers["transfer-encoding"].isEmpty,
            "accepted Content-Length beside Transfer-Encoding")
        check(
            Set(lengths.map { String($0).trimmingBlanks() }).count <= 1,
            "accepted differing Content-Length values \(lengths)")
    }

    static func checkConnect(_ head: HTTPRequestHead) {
        guard case .success(let request) = Self.validator.validateConnect(head, client: "fuzz") else { return }
        check(Self.validator.connectPorts.allows(request.port), "CONNECT to a port not allowed: \(request.port)")
        check(Self.isHost(request.host), "CONNECT host \(request.host.debugDescription)")
        check(
            ConnectTarget.parse(request.authority)
                == .success(ConnectTarget(host: request.host, port: request.port)),
            "the tunnel's authority \(request.authority.debugDescription) does not reparse to itself")
        Self.checkFields(request.headers, "CONNECT record")
        for field in request.headers {
            check(!HopByHopHeaders.fixed.contains(field.name.lowercased()), "CONNECT kept \(field.name)")
        }
    }

    static func checkAbsoluteURL(_ target: String) {
        guard case .success(let url) = AbsoluteURL.parse(target) else { return }
        let allowed = { (byte: UInt8) in
            byte > 0x20 && byte < 0x7F && byte != UInt8(ascii: "\\") && byte != UInt8(ascii: "@")
        }
        check(
            !url.authority.isEmpty && url.authority.utf8.allSatisfy(allowed),
            "authority \(url.authority.debugDescription)")
        check(
            url.text.hasPrefix("http://\(url.authority)"),
            "URL \(url.text.debugDescription) does not start with its host")
        check(!url.text.contains("#"), "URL \(url.text.debugDescription) kept a fragment")
    }

    static func checkConnectTarget(_ target: String) {
        guard case .success(let parsed) = ConnectTarget.parse(target) else { return }
        check((1...65535).contains(parsed.port), "CONNECT port \(parsed.port)")
        check(Self.isHost(parsed.host), "CONNECT host \(parsed.host.debugDescription)")
    }

    /// A name, IPv4 or IPv6 address: letters, digits and `-._:` only, nothing a resolver or a log
    /// line could read as more than one host.
    static func isHost(_ host: String) -> Bool {
        !host.isEmpty
            && host.utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"):
                    true
                default:
                    "-._:".utf8.contains(byte)
                }
            }
    }

    /// No field carries a byte that would end or split a line of the message it goes into, or
    /// one RFC 9110 §5.5 forbids.
    static func checkFields(_ fields: HTTPHeaderList, _ what: String) {
        for field in fields {
            FuzzHarness.checkField(name: field.name, value: field.value, what)
        }
    }
}

func check(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String, line: UInt = #line) {
    FuzzHarness.check(condition(), message(), line: line)
}

extension String {
    func trimmingBlanks() -> Substring {
        var view = Substring(self)
        while let first = view.first, first == " " || first == "\t" { view = view.dropFirst() }
        while let last = view.last, last == " " || last == "\t" { view = view.dropLast() }
        return view
    }
}

@main enum FuzzRequestMain {
    static func main() {
        FuzzHarness.main("FuzzRequest", FuzzRequest.run)
    }
}

#else
import Foundation

@main enum FuzzRequestMain {
    static func main() {
        FileHandle.standardError.write(Data("FuzzRequest needs a debug build (it uses @testable import)\n".utf8))
        exit(2)
    }
}
#endif
