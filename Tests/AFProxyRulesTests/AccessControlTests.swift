import AFProxyModel
import AFProxyRules
import Testing

@Suite struct AllowedClientsTests {
    @Test func loopbackByDefault() {
        let clients = AllowedClients.loopback
        #expect(clients.allows(IPAddress("127.0.0.1")))
        #expect(clients.allows(IPAddress("127.0.0.2")))
        #expect(clients.allows(IPAddress("::1")))
        #expect(clients.allows(IPAddress("::ffff:127.0.0.1")))
        #expect(!clients.allows(IPAddress("192.168.1.5")))
        #expect(!clients.allows(nil))
    }

    @Test func onlyTheListedNetworks() {
        let clients = AllowedClients([IPNetwork("127.0.0.1/32")!, IPNetwork("10.1.0.0/16")!])
        #expect(clients.allows(IPAddress("127.0.0.1")))
        #expect(!clients.allows(IPAddress("127.0.0.2")))
        #expect(clients.allows(IPAddress("10.1.200.3")))
        #expect(!clients.allows(IPAddress("10.2.0.1")))
        #expect(clients.description == "127.0.0.1/32, 10.1.0.0/16")
    }

    @Test func aNonLoopbackListenNeedsAllowClients() {
        #expect(AllowedClients.exposureRefusal(listenHost: "127.0.0.1", allowClientsSet: false) == nil)
        #expect(AllowedClients.exposureRefusal(listenHost: "::1", allowClientsSet: false) == nil)
        #expect(AllowedClients.exposureRefusal(listenHost: "localhost", allowClientsSet: false) == nil)
        #expect(AllowedClients.exposureRefusal(listenHost: "0.0.0.0", allowClientsSet: true) == nil)
        let refusal = AllowedClients.exposureRefusal(listenHost: "0.0.0.0", allowClientsSet: false)
        #expect(refusal?.contains("allow-clients") == true)
        #expect(AllowedClients.exposureRefusal(listenHost: "::", allowClientsSet: false) != nil)
        #expect(AllowedClients.exposureRefusal(listenHost: "192.168.1.2", allowClientsSet: false) != nil)
        #expect(AllowedClients.exposureRefusal(listenHost: "proxy.example", allowClientsSet: false) != nil)
    }
}

@Suite struct ProxyUsersTests {
    static let yescrypt = "$y$j9T$wV4cSIgq9n5zQxhpkHzu1/$q4tBMcdPBC8QpGOYgpBr3vY2xVXn7NqPl7wLtD1C1L."
    static let sha512 = "$6$salt$IxDD3jeSOb5eB1CX5LBsqZFVkJdido3OUILO5Ifz5iwMuTS4XMS130MTSuDDl3aCI6WouIL9AjRbLCelDCy.g."

    @Test func linesCommentsAndSchemes() throws {
        let users = try ProxyUsers(parsing: "# users\n\nalice:\(Self.yescrypt)\r\n  bob:\(Self.sha512)\n")
        #expect(users.hashes == ["alice": Self.yescrypt, "bob": Self.sha512])
    }

    @Test func weakAndUnknownSchemesAreRefused() {
        #expect(throws: ProxyUsersError.self) { try ProxyUsers(parsing: "alice:$1$salt$hashhashhashhashhash") }
        #expect(throws: ProxyUsersError.self) { try ProxyUsers(parsing: "alice:abJnggxhB/yWI") }
        #expect(throws: ProxyUsersError.self) { try ProxyUsers(parsing: "alice:plaintext") }
        #expect(ProxyUsers.schemeRefusal("$1$salt$x")?.hasPrefix("MD5-crypt") == true)
        #expect(ProxyUsers.schemeRefusal("$md5$x$y")?.contains("$md5$") == true)
        #expect(ProxyUsers.schemeRefusal(Self.yescrypt) == nil)
        #expect(ProxyUsers.schemeRefusal("$2b$12$" + String(repeating: "a", count: 53)) == nil)
    }

    @Test func badLinesAreNumbered() {
        #expect(throws: ProxyUsersError(line: 2, "expected user:hash")) {
            try ProxyUsers(parsing: "# x\nalice")
        }
        #expect(throws: ProxyUsersError(line: 3, "user alice is listed twice")) {
            try ProxyUsers(parsing: "alice:\(Self.sha512)\n\nalice:\(Self.sha512)")
        }
        #expect(throws: ProxyUsersError(line: 1, "the user name is empty")) {
            try ProxyUsers(parsing: ":\(Self.sha512)")
        }
    }
}
