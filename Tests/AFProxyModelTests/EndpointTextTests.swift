import AFProxyModel
import Testing

@Suite struct EndpointTextTests {
    @Test func ipv4AndNamesAreHostColonPort() {
        #expect(EndpointText.of(host: "127.0.0.1", port: 3128) == "127.0.0.1:3128")
        #expect(EndpointText.of(host: "localhost", port: 0) == "localhost:0")
    }

    @Test func ipv6IsBracketed() {
        #expect(EndpointText.of(host: "::1", port: 443) == "[::1]:443")
        #expect(EndpointText.of(host: "fe80::1%eth0", port: 80) == "[fe80::1%eth0]:80")
    }

    @Test func anAlreadyBracketedHostIsNotBracketedTwice() {
        #expect(EndpointText.of(host: "[::1]", port: 443) == "[::1]:443")
    }
}
