// The upstream response head as a hostile origin can shape it: the bytes split into lines at LF,
// each line with its LF, as curl hands header lines to `ResponseHeadParser`; every interim and
// final head it reports then goes through `ClientResponseHead` for an HTTP/1.0 and an HTTP/1.1
// client, as the listener would write it. The checks say what must hold of a head before any of
// it reaches a client: one framing, no byte that ends or splits a line.
//
// `@testable import` reaches the internal types without making them public; it needs modules
// built for testing, which debug builds are. A release build gets a stub (below).
#if DEBUG
@testable import AFProxyCurl
@testable import AFProxyListener
import AFProxyModel
import FuzzSupport
import NIOCore
import NIOHTTP1

enum FuzzResponseHead {
    static let via = "afproxy"

    static func run(_ input: UnsafeRawBufferPointer) {
        var parser = ResponseHeadParser()
        var start = 0
        var failed = false
        while start < input.count {
            let end = input[start...].firstIndex(of: UInt8(ascii: "\n")).map { $0 + 1 } ?? input.count
            let line = UnsafeRawBufferPointer(rebasing: input[start..<end])
            start = end
            let event = parser.feed(line)
            check(
                !failed || event == nil, "an event after the head was found invalid: \(String(describing: event))")
            switch event {
            case nil:
                break
            case .interim(let head):
                check((100..<200).contains(head.status) && head.status != 101, "interim status \(head.status)")
                Self.checkHead(head, "interim head")
                if let client = ClientResponseHead.interim(head, clientVersion: .http1_1, via: Self.via) {
                    Self.checkClientFields(client.headers, "interim head for HTTP/1.1")
                }
                check(
                    ClientResponseHead.interim(head, clientVersion: .http1_0, via: Self.via) == nil,
                    "an interim head for an HTTP/1.0 client")
            case .final(let head):
                check(parser.isComplete, "a final head before the parser is complete")
                Self.checkFinal(head)
            case .invalid:
                failed = true
            }
        }
        Self.checkFields(parser.trailers, "trailer section")
    }

    /// The bytes `ClientResponseEncoder` writes: lines that end in CRLF and hold no other CR,
    /// LF or NUL, one per field after the status line, and the empty line last.
    static func checkWritten(_ head: HTTPResponseHead, _ what: String) {
        var buffer = ByteBufferAllocator().buffer(capacity: 256)
        ClientResponseEncoder.write(head, into: &buffer)
        let bytes = Array(buffer.readableBytesView)
        var lines: [ArraySlice<UInt8>] = []
        var start = 0
        for index in bytes.indices where bytes[index] == UInt8(ascii: "\n") {
            check(index > start && bytes[index - 1] == UInt8(ascii: "\r"), "\(what) written with a bare LF")
            lines.append(bytes[start..<max(start, index - 1)])
            start = index + 1
        }
        check(start == bytes.count, "\(what) written with bytes after its last line")
        check(
            lines.count == head.headers.count + 2 && lines.last?.isEmpty == true,
            "\(what) written as \(lines.count) lines")
        for line in lines {
            check(
                !line.contains(where: { $0 == 0 || $0 == UInt8(ascii: "\r") }),
                "\(what) written with a CR or NUL inside a line")
        }
    }

    static func checkFinal(_ head: ProxyResponseHead) {
        Self.checkHead(head, "final head")
        check(!(100..<200).contains(head.status) || head.status == 101, "final head with status \(head.status)")
        let lengths = head.headers.values("content-length")
        let codings = head.transferCodings
        check(lengths.count <= 1, "final head with \(lengths.count) Content-Length fields")
        check(lengths.isEmpty || codings.isEmpty, "final head with Content-Length beside Transfer-Encoding")
        for length in lengths {
            check(
                !length.isEmpty && length.utf8.count <= 18 && length.utf8.allSatisfy { (48...57).contains($0) },
                "Content-Length \(length.debugDescription)")
        }
        if let chunked = codings.firstIndex(of: "chunked") {
            check(chunked == codings.count - 1, "a coding after chunked: \(codings)")
        }
        check(ResponseFraming.normalize(head) == .success(head), "normalizing the normal head changed it")

        for version in [HTTPVersion.http1_0, .http1_1] {
            for requestIsHead in [false, true] {
                for keepAlive in [false, true] {
                    let made = ClientResponseHead.make(
                        head, requestIsHead: requestIsHead, clientVersion: version, keepAlive: keepAlive,
                        via: Self.via)
                    Self.checkClient(made, origin: head, version: version, requestIsHead: requestIsHead)
                }
            }
        }
    }

    /// The head as one client gets it: the framing it announces is the one the handler writes.
    static func checkClient(
        _ made: Result<ClientResponseHead, ProxyRefusal>, origin: ProxyResponseHead, version: HTTPVersion,
        requestIsHead: Bool
    ) {
        let what = "head for HTTP/\(version.major).\(version.minor)\(requestIsHead ? " HEAD" : "")"
        guard case .success(let client) = made else {
            check(version == .http1_0 && !requestIsHead, "\(what) refused: \(made)")
            return
        }
        let headers = client.head.headers
        Self.checkClientFields(headers, what)
        Self.checkWritten(client.head, what)
        check(client.head.version == version, "\(what) has version \(client.head.version)")
        check(client.head.status.code == UInt(origin.status), "\(what) changed the status")
        // HTTP/2 and 3 have no reason phrase: an HTTP/1.x client gets the standard one for the
        // code instead (none for a code without one, which RFC 9112 §4 allows).
        if origin.reason.isEmpty && !origin.version.contains(".") {
            let standard =
                origin.status == 103 ? "Early Hints" : HTTPResponseStatus(statusCode: origin.status).reasonPhrase
            check(client.head.status.reasonPhrase == standard, "\(what) gave an HTTP/2 answer another reason")
        } else {
            check(client.head.status.reasonPhrase == origin.reason, "\(what) changed the reason")
        }
        let lengths = headers["content-length"]
        let codings = headers["transfer-encoding"]
        check(
            lengths.count <= 1 && codings.count <= 1, "\(what): \(lengths.count) lengths, \(codings.count) codings")
        check(lengths.isEmpty || codings.isEmpty, "\(what) with Content-Length beside Transfer-Encoding")
        check(version == .http1_1 || codings.isEmpty, "\(what) with a Transfer-Encoding")
        check(headers["via"].count == 1, "\(what) with \(headers["via"].count) Via fields")
        check(
            headers["connection"].allSatisfy { $0 == "close" || $0 == "keep-alive" }
                && headers["connection"].count <= 1,
            "\(what) passed on Connection: \(headers["connection"])")
        for name in [
            "keep-alive", "proxy-connection", "te", "upgrade", "proxy-authenticate", "proxy-authorization",
        ] {
            check(headers[name].isEmpty, "\(what) passed on \(name)")
        }
        switch client.framing {
        case .none:
            check(
                requestIsHead || [204, 304].contains(origin.status) || (100..<200).contains(origin.status),
                "\(what) without a body for status \(origin.status)")
        case .length:
            check(lengths == [origin.headers.first("content-length") ?? ""], "\(what) announces \(lengths)")
        case .chunked:
            check(
                codings.count == 1 && (codings[0] == "chunked" || codings[0].hasSuffix(", chunked")),
                "\(what) chunked, announcing \(codings)")
        case .close:
            check(
                client.closeAfter && lengths.isEmpty && codings.isEmpty, "\(what) close-delimited, announcing more")
        case .frames:
            check(version.major == 2 && lengths.isEmpty && codings.isEmpty, "\(what) framed by HTTP/2, announcing more")
        }
    }

    static func checkHead(_ head: ProxyResponseHead, _ what: String) {
        check((0...999).contains(head.status), "\(what): status \(head.status)")
        check(
            !head.reason.utf8.contains { ($0 < 0x20 && $0 != 0x09) || $0 == 0x7F },
            "\(what): reason \(head.reason.debugDescription)")
        check(
            !head.version.utf8.contains { $0 <= 0x20 || $0 == 0x7F },
            "\(what): version \(head.version.debugDescription)")
        Self.checkFields(head.headers, what)
    }

    static func checkClientFields(_ headers: HTTPHeaders, _ what: String) {
        Self.checkFields(headers.map { HTTPHeaderField($0.name, $0.value) }, what)
    }

    /// No field carries a byte that would end or split a line of the head it goes into, or one
    /// RFC 9110 §5.5 forbids; a name is a token; a value has no blank at either end (field-value
    /// of RFC 9110 §5.5 excludes them, and a client may refuse `Content-Length: 0 `).
    static func checkFields(_ fields: HTTPHeaderList, _ what: String) {
        let blank: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x09 }
        for field in fields {
            FuzzHarness.checkField(name: field.name, value: field.value, what)
            check(
                !(field.value.utf8.first.map(blank) ?? false) && !(field.value.utf8.last.map(blank) ?? false),
                "\(what): value of \(field.name) has a blank at one end: \(field.value.debugDescription)")
        }
    }
}

func check(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String, line: UInt = #line) {
    FuzzHarness.check(condition(), message(), line: line)
}

@main enum FuzzResponseHeadMain {
    static func main() {
        FuzzHarness.main("FuzzResponseHead", FuzzResponseHead.run)
    }
}

#else
import Foundation

@main enum FuzzResponseHeadMain {
    static func main() {
        FileHandle.standardError.write(
            Data("FuzzResponseHead needs a debug build (it uses @testable import)\n".utf8))
        exit(2)
    }
}
#endif
