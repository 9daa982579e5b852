import Testing

@testable import AFProxyCurl

/// Which URLs a rerouted download still sends its credentials to: only its own origin's.
@Suite struct URLOriginTests {
    @Test func theSchemesPortIsImpliedAndCaseDoesNotCount() {
        #expect(URLOrigin("http://Example.COM/a") == URLOrigin("HTTP://example.com:80/b?c"))
        #expect(URLOrigin("https://example.com/") == URLOrigin("https://example.com:443/x"))
    }

    @Test func anotherHostPortOrSchemeIsAnotherOrigin() {
        let start = URLOrigin("http://example.com/a")
        #expect(start != URLOrigin("http://example.com:8080/a"))
        #expect(start != URLOrigin("https://example.com/a"))
        #expect(start != URLOrigin("http://www.example.com/a"))
        #expect(URLOrigin("http://[::1]:8080/") == URLOrigin("http://[::1]:8080/x"))
    }

    @Test func aURLWithoutAHostOrAKnownPortHasNoOrigin() {
        #expect(URLOrigin("/relative") == nil)
        #expect(URLOrigin("ftp://example.com/") == nil)
    }
}
