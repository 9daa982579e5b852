@testable import AFProxyControl
import Testing

@Suite struct HTTPDateTests {
    @Test func formatsAnIMFFixdate() {
        // RFC 9110's example
        #expect(HTTPDate.string(secondsSince1970: 784_111_777) == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(HTTPDate.string(secondsSince1970: 0) == "Thu, 01 Jan 1970 00:00:00 GMT")
        #expect(HTTPDate.string(secondsSince1970: 978_307_199) == "Sun, 31 Dec 2000 23:59:59 GMT")
        #expect(HTTPDate.string(secondsSince1970: 1_769_929_509) == "Sun, 01 Feb 2026 07:05:09 GMT")
    }

    @Test func nowHasTheFixedLength() {
        #expect(HTTPDate.now().utf8.count == 29)
        #expect(HTTPDate.now().hasSuffix(" GMT"))
    }
}
