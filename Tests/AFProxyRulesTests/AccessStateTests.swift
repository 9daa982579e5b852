import AFProxyModel
import AFProxyRules
import Testing

@Suite struct AccessStateTests {
    @Test func aChangeOfUsersForgetsTheVerifiedCredentialsAndNothingElseDoes() {
        let access = LiveRules(AccessState(AccessRules(users: ProxyUsers(["alice": "a"]))))
        #expect(access.isActive)
        access.withState { $0.verified[[1]] = "alice" }
        access.change { $0.clients = AllowedClients(IPNetwork.loopback + [IPNetwork("10.0.0.0/8")!]) }
        #expect(access.withState { $0.verified[[1]] } == "alice")
        access.change { $0.users = ProxyUsers(["bob": "b"]) }
        #expect(access.withState { $0.verified.isEmpty })
        access.change { $0.users = nil }
        #expect(!access.isActive)  // no proxy-auth-file: no authentication
    }
}
