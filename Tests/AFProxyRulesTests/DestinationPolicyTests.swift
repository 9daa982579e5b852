import AFProxyModel
import AFProxyRules
import Testing

@Suite struct DestinationPolicyTests {
    private func policy(
        deny: [String] = [], allow: [String] = [], denyPrivate: Bool = false
    ) throws
        -> DestinationPolicy
    {
        DestinationPolicy(
            denyHosts: try deny.map { try HostPattern($0) }, allowHosts: try allow.map { try HostPattern($0) },
            denyPrivate: denyPrivate)
    }

    @Test func noRuleAllowsEverythingAndChecksNoAddress() {
        let open = DestinationPolicy.open
        #expect(open.isOpen)
        #expect(!open.checksAddresses)
        #expect(open.denial(host: "example.org") == nil)
        #expect(open.denial(host: "127.0.0.1") == nil)
        #expect(open.denial(address: IPAddress("10.0.0.1")!, host: "intranet") == nil)
    }

    @Test func aDeniedNameNamesTheNarrowestRule() throws {
        let rules = try policy(deny: ["*.example.org", "*.ads.example.org"])
        #expect(
            rules.denial(host: "x.ads.example.org")?.description
                == "x.ads.example.org is denied by deny-hosts *.ads.example.org")
        #expect(rules.denial(host: "WWW.Example.org.")?.rule == "deny-hosts *.example.org")
        #expect(rules.denial(host: "example.org") == nil)
        #expect(!rules.checksAddresses)
    }

    @Test func aBlockInDenyHostsAppliesToLiteralsAndResolvedAddresses() throws {
        let rules = try policy(deny: ["10.0.0.0/8"])
        #expect(rules.checksAddresses)
        #expect(rules.denial(host: "10.1.2.3")?.rule == "deny-hosts 10.0.0.0/8")
        #expect(rules.denial(host: "intranet.example") == nil)  // only its addresses can tell
        #expect(
            rules.denial(address: IPAddress("10.9.9.9")!, host: "intranet.example")?.host
                == "intranet.example (10.9.9.9)")
        #expect(rules.denial(address: IPAddress("::ffff:10.9.9.9")!, host: "x") != nil)
        #expect(rules.denial(address: IPAddress("192.0.2.1")!, host: "x") == nil)
    }

    /// Loopback and a few names (what the test suite's daemons allow): any other name is refused
    /// as it is, never looked up, while loopback literals and the names listed go through.
    @Test func aLoopbackAllowListRefusesOtherNamesBeforeTheyAreLookedUp() throws {
        let rules = try policy(allow: ["127.0.0.0/8", "::1", "localhost"])
        #expect(
            rules.denial(host: "update.example.com")?.description
                == "update.example.com is denied by allow-hosts (not listed)")
        #expect(rules.denial(host: "127.0.0.1") == nil)
        #expect(rules.denial(host: "::1") == nil)
        #expect(rules.denial(host: "localhost") == nil)
        #expect(rules.denial(host: "192.0.2.1")?.rule == "allow-hosts (not listed)")
        // A block beyond loopback still lets a name through to be judged by its addresses.
        let wider = try policy(allow: ["127.0.0.0/8", "192.0.2.0/24"])
        #expect(wider.denial(host: "name.example") == nil)
        #expect(try !HostPattern("127.0.0.0/7").isLoopbackOnly)
        #expect(try HostPattern("127.1.2.3").isLoopbackOnly)
        #expect(try !HostPattern("::/0").isLoopbackOnly)
    }

    @Test func allowHostsAllowsOnlyWhatItLists() throws {
        let rules = try policy(allow: ["*.example.org", "api.example.net"])
        #expect(rules.denial(host: "www.example.org") == nil)
        #expect(rules.denial(host: "api.example.net") == nil)
        #expect(rules.denial(host: "example.com")?.rule == "allow-hosts (not listed)")
        #expect(rules.denial(host: "192.0.2.1")?.rule == "allow-hosts (not listed)")
        #expect(rules.denial(address: IPAddress("192.0.2.1")!, host: "www.example.org") == nil)
    }

    @Test func anAddressInAllowHostsDecidesAfterResolution() throws {
        let rules = try policy(allow: ["192.0.2.0/24"])
        #expect(rules.denial(host: "name.example") == nil)
        #expect(rules.denial(address: IPAddress("192.0.2.9")!, host: "name.example") == nil)
        #expect(
            rules.denial(address: IPAddress("198.51.100.1")!, host: "name.example")?.rule == "allow-hosts (not listed)")
    }

    @Test func denyWinsOverAllow() throws {
        let rules = try policy(deny: ["bad.example.org"], allow: ["*.example.org"])
        #expect(rules.denial(host: "bad.example.org")?.rule == "deny-hosts bad.example.org")
        #expect(rules.denial(host: "good.example.org") == nil)
    }

    @Test func privateDestinationsAreRefusedAfterResolution() throws {
        let rules = try policy(denyPrivate: true)
        #expect(rules.checksAddresses)
        #expect(rules.denial(host: "private.test") == nil)
        let denial = rules.denial(address: IPAddress("127.0.0.1")!, host: "private.test")
        #expect(
            denial?.description == "private.test (127.0.0.1) is denied by deny-private-destinations (loopback address)")
        #expect(rules.denial(host: "127.0.0.1") != nil)
        #expect(rules.denial(host: "[::1]") != nil)
        #expect(rules.denial(address: IPAddress("93.184.215.14")!, host: "example.com") == nil)
        // Explicitly allowed or not, a private address stays refused.
        let both = try policy(allow: ["10.0.0.0/8"], denyPrivate: true)
        #expect(both.denial(address: IPAddress("10.0.0.1")!, host: "x")?.rule.hasPrefix("deny-private") == true)
    }
}

@Suite struct NonPublicAddressTests {
    @Test(arguments: [
        ("127.0.0.1", "loopback"), ("127.255.0.9", "loopback"), ("::1", "loopback"), ("::ffff:127.0.0.1", "loopback"),
        ("10.0.0.1", "private"), ("172.16.0.1", "private"), ("172.31.255.255", "private"), ("192.168.1.1", "private"),
        ("100.64.0.1", "shared (CGNAT)"), ("100.127.255.255", "shared (CGNAT)"), ("169.254.169.254", "link-local"),
        ("0.0.0.0", "unspecified"), ("0.1.2.3", "unspecified"), ("::", "unspecified"), ("fc00::1", "private"),
        ("fd12:3456::1", "private"), ("fe80::1", "link-local"), ("febf::1", "link-local"),
        ("::ffff:192.168.0.1", "private"), ("::ffff:169.254.1.1", "link-local"),
        // NAT64 and 6to4 stand for the IPv4 address they carry.
        ("64:ff9b::7f00:1", "loopback"), ("64:ff9b::127.0.0.1", "loopback"), ("64:ff9b::a00:1", "private"),
        ("64:ff9b::a9fe:a9fe", "link-local"), ("64:ff9b::6440:1", "shared (CGNAT)"), ("64:ff9b::", "unspecified"),
        ("64:ff9b:1::c0a8:101", "private"), ("64:ff9b:1:ffff::7f00:1", "loopback"),
        ("2002:c0a8:0101::", "private"), ("2002:7f00:1::1", "loopback"), ("2002:a9fe:a9fe:1:2:3:4:5", "link-local"),
        ("2002::1", "unspecified"),
    ])
    func nonPublic(address: String, scope: String) {
        #expect(IPAddress(address)?.nonPublicScope == scope)
    }

    @Test(arguments: [
        "8.8.8.8", "172.32.0.1", "172.15.255.255", "100.128.0.1", "100.63.255.255", "192.169.0.1", "169.255.0.1",
        "1.1.1.1", "2001:db8::1", "2606:4700::1111", "fec0::1", "::ffff:8.8.8.8",
        "64:ff9b::808:808", "64:ff9b::8.8.8.8", "64:ff9b:1::101:101", "2002:808:808::1", "2002:101:101:7f00:1::",
        // Next to the blocks, not in them: no IPv4 address read out of these.
        "64:ff9b:0:0:0:1:7f00:1", "64:ff9b:2::7f00:1", "2003:c0a8:101::",
    ])
    func publicAddress(address: String) {
        #expect(IPAddress(address)?.nonPublicScope == nil)
    }
}
