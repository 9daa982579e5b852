import AFProxyModel
import AFProxyRules
import Testing

@Suite struct AccessStateTests {
    @Test func newUsersForgetTheVerifiedCredentialsAndNothingElseDoes() {
        let access = LiveRules(AccessState(AccessRules(users: ProxyUsers(["alice": "a"]))))
        #expect(access.isActive)
        access.withState { $0.verified[[1]] = "alice" }
        access.change { $0.clients = AllowedClients(IPNetwork.loopback + [IPNetwork("10.0.0.0/8")!]) }
        #expect(access.withState { $0.verified[[1]] } == "alice")
        access.change { $0.users = ProxyUsers(["bob": "b"]) }
        #expect(access.withState { $0.verified.isEmpty })
        access.withState { $0.verified[[2]] = "bob" }
        // No proxy-auth-file any more: new connections go without authentication, those opened
        // with it keep checking against the last users.
        access.change { $0.users = nil }
        #expect(!access.isActive)
        #expect(access.withState { $0.checkedUsers } == ProxyUsers(["bob": "b"]))
        #expect(access.withState { $0.verified[[2]] } == "bob")
    }
}
