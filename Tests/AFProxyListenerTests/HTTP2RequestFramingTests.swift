import NIOHPACK
import Testing

@testable import AFProxyListener

@Suite struct HTTP2RequestFramingTests {
    private func fields(_ method: String, _ extra: [(String, String)] = []) -> HPACKHeaders {
        HPACKHeaders([(":method", method), (":path", "/"), (":scheme", "https"), (":authority", "a.test")] + extra)
    }

    /// A body the HEADERS frame leaves open and no length names: chunked to the validator.
    @Test func aBodyOfUnknownLengthIsMarkedChunked() {
        let open = HTTP2RequestFraming.http1Fields(self.fields("POST"), endStream: false)
        #expect(open["transfer-encoding"] == ["chunked"])
        let sized = HTTP2RequestFraming.http1Fields(self.fields("PUT", [("content-length", "3")]), endStream: false)
        #expect(sized["transfer-encoding"].isEmpty)
        let ended = HTTP2RequestFraming.http1Fields(self.fields("POST"), endStream: true)
        #expect(ended["transfer-encoding"].isEmpty)
        let get = HTTP2RequestFraming.http1Fields(self.fields("GET"), endStream: false)
        #expect(get["transfer-encoding"].isEmpty)
    }

    /// RFC 9113 §8.2.3: cookies split into fields are one field again, in order.
    @Test func splitCookiesAreJoined() {
        let joined = HTTP2RequestFraming.http1Fields(
            self.fields("GET", [("cookie", "a=1"), ("x", "y"), ("cookie", "b=2, c")]), endStream: true)
        #expect(joined["cookie"] == ["a=1; b=2, c"])
        #expect(joined["x"] == ["y"])
    }
}
