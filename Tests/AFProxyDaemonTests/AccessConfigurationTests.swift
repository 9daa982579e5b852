import AFProxyListener
import AFProxyModel
import AFProxyRules
import Testing

@testable import AFProxyDaemon

@Suite struct AccessConfigurationTests {
    @Test func allowClientsAddsFromEverySourceAndDefaultsToLoopback() throws {
        #expect(DaemonConfiguration().allowClients == nil)
        #expect(try Daemon.configuredRules(DaemonConfiguration()).access.clients == .loopback)
        var configuration = DaemonConfiguration()
        try ConfigurationFile.apply(
            "allow-clients = 127.0.0.1\nallow-clients = 10.0.0.0/8, fd00::/8\n", path: "c.conf", to: &configuration)
        #expect(configuration.allowClients?.map(\.description) == ["127.0.0.1/32", "10.0.0.0/8", "fd00::/8"])
        let resolved = try AFProxyCommand.parse(["--allow-clients", "192.168.0.0/16"]).resolve(environment: [
            "AFPROXY_ALLOW_CLIENTS": "127.0.0.2"
        ])
        #expect(resolved.allowClients?.map(\.description) == ["127.0.0.2/32", "192.168.0.0/16"])
        #expect(throws: ConfigurationError.self) {
            try ConfigurationFile.apply("allow-clients = 10.0.0.0/33", path: "c.conf", to: &configuration)
        }
    }

    @Test func aNonLoopbackListenNeedsAllowClients() throws {
        var configuration = DaemonConfiguration()
        try Daemon.checkExposure(configuration)
        configuration.listen = ["127.0.0.1:3128", "0.0.0.0:3128"]
        #expect(throws: ConfigurationError.self) { try Daemon.checkExposure(configuration) }
        configuration.allowClients = [IPNetwork("192.168.0.0/16")!]
        try Daemon.checkExposure(configuration)
    }

    @Test func destinationRules() throws {
        var configuration = DaemonConfiguration()
        try ConfigurationFile.apply(
            "deny-hosts = *.ads.example, 10.0.0.0/8\nallow-hosts = *.example\ndeny-private-destinations = yes\n",
            path: "c.conf", to: &configuration)
        #expect(configuration.destinations.denyHosts.map(\.description) == ["*.ads.example", "10.0.0.0/8"])
        #expect(configuration.destinations.allowHosts.map(\.description) == ["*.example"])
        #expect(configuration.destinations.denyPrivate)
        let resolved = try AFProxyCommand.parse([
            "--deny-hosts", "x.test", "--allow-hosts", "y.test", "--deny-private-destinations", "no",
        ]).resolve(environment: ["AFPROXY_DENY_HOSTS": "w.test"])
        #expect(resolved.destinations.denyHosts.map(\.description) == ["w.test", "x.test"])
        #expect(resolved.destinations.allowHosts.map(\.description) == ["y.test"])
        #expect(!resolved.destinations.denyPrivate)
        #expect(throws: ConfigurationError.self) {
            try ConfigurationFile.apply("deny-hosts = bad host", path: "c.conf", to: &configuration)
        }
    }

    @Test func proxyAuthFileIsAnAbsolutePathReadForTheRuleBook() throws {
        var configuration = DaemonConfiguration()
        #expect(throws: ConfigurationError.self) {
            try ConfigurationFile.apply("proxy-auth-file = users", path: "c.conf", to: &configuration)
        }
        try ConfigurationFile.apply("proxy-auth-file = /nonexistent/users", path: "c.conf", to: &configuration)
        #expect(configuration.proxyAuthFile == "/nonexistent/users")
        #expect(throws: ConfigurationError.self) { try Daemon.configuredRules(configuration) }
    }
}
