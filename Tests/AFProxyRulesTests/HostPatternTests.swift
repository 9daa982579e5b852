import AFProxyModel
import AFProxyRules
import Testing

@Suite struct HostPatternTests {
    @Test func namesMatchWhateverTheClientsSpelling() throws {
        let pattern = try HostPattern("Example.ORG")
        #expect(pattern.matches(host: "example.org"))
        #expect(pattern.matches(host: "EXAMPLE.org."))
        #expect(!pattern.matches(host: "www.example.org"))
        #expect(!pattern.matches(host: "example.org.evil"))
        #expect(pattern.description == "example.org")
    }

    @Test func aWildcardCoversNamesBelowNotTheDomain() throws {
        let pattern = try HostPattern("*.example.org")
        #expect(pattern.matches(host: "www.example.org"))
        #expect(pattern.matches(host: "a.b.example.org"))
        #expect(!pattern.matches(host: "example.org"))
        #expect(!pattern.matches(host: "badexample.org"))
        #expect(pattern.description == "*.example.org")
    }

    @Test func addressesAndBlocks() throws {
        let block = try HostPattern("10.0.0.0/8")
        #expect(block.matches(host: "10.2.3.4"))
        #expect(!block.matches(host: "11.0.0.1"))
        #expect(!block.matches(host: "ten.example"))
        #expect(block.matches(IPAddress("10.9.9.9")!))
        let v6 = try HostPattern("[2001:db8::1]")
        #expect(v6.matches(host: "[2001:DB8:0::1]"))
        #expect(v6.description == "2001:db8::1")
        let mapped = try HostPattern("192.0.2.0/24")
        #expect(mapped.matches(IPAddress("::ffff:192.0.2.9")!))
    }

    @Test func theNarrowerPatternIsMoreSpecific() throws {
        #expect(try HostPattern("a.example.org").specificity > HostPattern("*.example.org").specificity)
        #expect(try HostPattern("*.a.example.org").specificity > HostPattern("*.example.org").specificity)
        #expect(try HostPattern("10.1.0.0/16").specificity > HostPattern("10.0.0.0/8").specificity)
    }

    @Test func refusesWhatIsNoHost() {
        for text in ["", "*.", "**", "a b", "a/b", "exa*mple.org", "a..b", ".a", "10.0.0.0/33", "::1/129", "http://x"] {
            #expect(throws: HostPatternError.self) { try HostPattern(text) }
        }
    }
}

@Suite struct IPNetworkTests {
    @Test func blocksContainTheirAddresses() throws {
        let net = try #require(IPNetwork("172.16.0.0/12"))
        #expect(net.contains(IPAddress("172.31.255.255")!))
        #expect(!net.contains(IPAddress("172.32.0.0")!))
        #expect(!net.contains(IPAddress("::1")!))
        #expect(IPNetwork("10.1.2.3/8") == IPNetwork("10.0.0.0/8"))
        #expect(IPNetwork("fd00::/8")!.contains(IPAddress("fd12::5")!))
        #expect(IPNetwork("::ffff:10.0.0.0/104") == IPNetwork("10.0.0.0/8"))
        #expect(IPNetwork("192.0.2.1")?.prefixLength == 32)
    }

    @Test func loopbackIsBothFamilies() {
        #expect(IPNetwork.loopback.contains { $0.contains(IPAddress("127.0.0.2")!) })
        #expect(IPNetwork.loopback.contains { $0.contains(IPAddress("::1")!) })
        #expect(IPNetwork.loopback.contains { $0.contains(IPAddress("::ffff:127.0.0.1")!) })
        #expect(!IPNetwork.loopback.contains { $0.contains(IPAddress("10.0.0.1")!) })
    }

    @Test func addressesPrintInTheirShortForm() {
        #expect(IPAddress("2001:0db8:0000::0001")?.description == "2001:db8::1")
        #expect(IPAddress("fe80::1%eth0")?.description == "fe80::1")
        #expect(IPAddress("example.org") == nil)
        #expect(IPAddress("1.2.3") == nil)
    }
}
