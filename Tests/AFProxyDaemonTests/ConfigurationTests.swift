import AFProxyModel
import Testing

@testable import AFProxyDaemon

@Suite struct ConfigurationTests {
    @Test func fileEnvironmentAndFlagsOverrideInThatOrder() throws {
        var configuration = DaemonConfiguration()
        let file = """
            # comment
            listen = 127.0.0.1:8080
            listen = [::1]:8080   # trailing comment
            max-connections = 10
            idle-timeout = 5
            """
        try ConfigurationFile.apply(file, path: "test.conf", to: &configuration)
        #expect(configuration.listen == ["127.0.0.1:8080", "[::1]:8080"])
        #expect(configuration.maxConnections == 10)
        #expect(configuration.idleTimeout == 5)

        try ConfigurationFile.applyEnvironment(["AFPROXY_MAX_CONNECTIONS": "20"], to: &configuration)
        #expect(configuration.maxConnections == 20)

        let command = try AFProxyCommand.parse(["--max-connections", "30", "--listen", "127.0.0.1:0"])
        let resolved = try command.resolve(environment: ["AFPROXY_MAX_CONNECTIONS": "20", "AFPROXY_HISTORY_SIZE": "7"])
        #expect(resolved.maxConnections == 30)
        #expect(resolved.historySize == 7)
        #expect(resolved.listen == ["127.0.0.1:0"])
    }

    @Test func bufferBudgetTakesSizesWithUnits() throws {
        #expect(try DaemonConfiguration.size("64M", 0...(16 << 30)) == 64 << 20)
        #expect(try DaemonConfiguration.size("512KiB", 0...(16 << 30)) == 512 << 10)
        #expect(try DaemonConfiguration.size("1G", 0...(16 << 30)) == 1 << 30)
        #expect(try DaemonConfiguration.size("0", 0...(16 << 30)) == 0)
        for bad in ["", "M", "-1M", "64 M", "1.5G", "64X", "17G", "99999999999999999999G"] {
            #expect(throws: ConfigurationError.self) { try DaemonConfiguration.size(bad, 0...(16 << 30)) }
        }
        let command = try AFProxyCommand.parse(["--buffer-budget", "8M"])
        #expect(try command.resolve(environment: [:]).bufferBudget == 8 << 20)
        #expect(DaemonConfiguration().bufferBudget == 64 << 20)
    }

    @Test func allowConnectPortAddsFromEverySource() throws {
        var configuration = DaemonConfiguration()
        try ConfigurationFile.apply(
            "allow-connect-port = 8443\nallow-connect-port = 563, 993\n", path: "c.conf", to: &configuration)
        #expect(configuration.allowConnectPorts.description == "443, 563, 993, 8443")
        #expect(
            throws: ConfigurationError(
                "allow-connect-port: expected a port from 1 to 65535 or *, got 0", place: "c.conf:1")
        ) {
            try ConfigurationFile.apply("allow-connect-port = 0", path: "c.conf", to: &configuration)
        }

        let command = try AFProxyCommand.parse(["--allow-connect-port", "9443", "--allow-connect-port", "10443"])
        let resolved = try command.resolve(environment: ["AFPROXY_ALLOW_CONNECT_PORT": "8443"])
        #expect(resolved.allowConnectPorts.description == "443, 8443, 9443, 10443")
        let any = try AFProxyCommand.parse(["--allow-connect-port", "*"]).resolve(environment: [:])
        #expect(any.allowConnectPorts.allows(25))
        #expect(!DaemonConfiguration().allowConnectPorts.allows(25))
    }

    @Test func viaNameIsATokenFromEverySourceAndReachesTheListener() throws {
        #expect(DaemonConfiguration().viaName == "afproxy")
        var configuration = DaemonConfiguration()
        try ConfigurationFile.apply("via-name = edge-7.example", path: "c.conf", to: &configuration)
        #expect(configuration.viaName == "edge-7.example")
        #expect(Daemon.listenerConfiguration(configuration).viaName == "edge-7.example")
        let resolved = try AFProxyCommand.parse(["--via-name", "flag_name"]).resolve(environment: [
            "AFPROXY_VIA_NAME": "env"
        ])
        #expect(resolved.viaName == "flag_name")
        #expect(try AFProxyCommand.parse([]).resolve(environment: ["AFPROXY_VIA_NAME": "env"]).viaName == "env")
        for bad in ["two words", "a,b", "(x)", "na\u{EF}ve", String(repeating: "x", count: 65)] {
            #expect(throws: ConfigurationError.self, "\(bad)") { try DaemonConfiguration.viaName(bad) }
        }
        #expect(throws: ConfigurationError.self) {
            try AFProxyCommand.parse(["--via-name", "a b"]).resolve(environment: [:])
        }
    }

    @Test func aFileWrittenOnWindowsReadsTheSame() throws {
        var configuration = DaemonConfiguration()
        let file = "# edited elsewhere\r\nlisten = 127.0.0.1:8080\r\nmax-connections = 10\r\n\r\nidle-timeout = 5\r\n"
        try ConfigurationFile.apply(file, path: "crlf.conf", to: &configuration)
        #expect(configuration.listen == ["127.0.0.1:8080"])
        #expect(configuration.maxConnections == 10)
        #expect(configuration.idleTimeout == 5)
        // Lines are counted as an editor counts them.
        #expect(throws: ConfigurationError("unknown key colour", place: "crlf.conf:3")) {
            try ConfigurationFile.apply("#\r\n\r\ncolour = blue\r\n", path: "crlf.conf", to: &configuration)
        }
    }

    @Test func errorsNameTheirPlace() {
        var configuration = DaemonConfiguration()
        #expect(throws: ConfigurationError("unknown key colour", place: "c.conf:2")) {
            try ConfigurationFile.apply("\ncolour = blue", path: "c.conf", to: &configuration)
        }
        #expect(throws: ConfigurationError.self) {
            try ConfigurationFile.apply("max-connections = lots", path: "c.conf", to: &configuration)
        }
        #expect(throws: ConfigurationError.self) {
            try ConfigurationFile.apply("listen = nowhere", path: "c.conf", to: &configuration)
        }
        #expect(throws: ConfigurationError.self) {
            try ConfigurationFile.apply("just words", path: "c.conf", to: &configuration)
        }
        #expect(throws: ConfigurationError.self) {
            try ConfigurationFile.apply("max-header-bytes = 100000", path: "c.conf", to: &configuration)
        }
    }

    @Test func listenAddresses() throws {
        #expect(try ListenAddress.parse("127.0.0.1:3128") == ListenAddress(host: "127.0.0.1", port: 3128))
        #expect(try ListenAddress.parse("[::1]:0") == ListenAddress(host: "::1", port: 0))
        #expect(throws: ConfigurationError.self) { try ListenAddress.parse("host:70000") }
        #expect(throws: ConfigurationError.self) { try ListenAddress.parse(":80") }
    }
}

@Suite struct ThrottleConfigurationTests {
    @Test func throttleKeysMakeDefaultRules() throws {
        var configuration = DaemonConfiguration()
        try ConfigurationFile.apply(
            "throttle-global = 10M\nthrottle-host = *.example.org 1M\nthrottle-host = *.example.org 500K up\n",
            path: "c.conf", to: &configuration)
        let rules = configuration.throttleDefaults
        #expect(rules.map(\.scope.description) == ["global", "host *.example.org"])
        #expect(rules[1].down?.bytesPerSecond == 1_000_000 && rules[1].up?.bytesPerSecond == 500_000)
        #expect(
            throws: ConfigurationError("throttle-host: expected PATTERN RATE [down|up], not 1M", place: "c.conf:1")
        ) {
            try ConfigurationFile.apply("throttle-host = 1M", path: "c.conf", to: &configuration)
        }
        let command = try AFProxyCommand.parse(["--throttle-global", "2M down"])
        let resolved = try command.resolve(environment: ["AFPROXY_THROTTLE_HOST": "a.example 1K, b.example 2K"])
        #expect(resolved.throttleDefaults.map(\.scope.description) == ["global", "host a.example", "host b.example"])
        #expect(resolved.throttleDefaults[0].up == nil)
    }

    @Test func upstreamProxyFromEverySourceAndExcludesAdd() throws {
        var configuration = DaemonConfiguration()
        try ConfigurationFile.apply(
            """
            upstream-proxy = http://alice:s3cret@proxy.example:3128
            upstream-exclude = *.corp.example
            upstream-exclude = 10.0.0.0/8
            """, path: "c.conf", to: &configuration)
        #expect(configuration.upstream.proxy?.credentials?.password == "s3cret")
        #expect(configuration.upstream.exclude.map(\.description) == ["*.corp.example", "10.0.0.0/8"])

        let command = try AFProxyCommand.parse(["--upstream-exclude", "b.example"])
        let resolved = try command.resolve(environment: [
            "AFPROXY_UPSTREAM_PROXY": "socks5h://127.0.0.1:1080", "AFPROXY_UPSTREAM_EXCLUDE": "a.example",
        ])
        #expect(resolved.upstream.proxy == UpstreamProxy(scheme: .socks5h, host: "127.0.0.1", port: 1080))
        #expect(resolved.upstream.exclude.map(\.description) == ["a.example", "b.example"])
        // A flag switches off a proxy the environment (or the file) sets.
        let off = try AFProxyCommand.parse(["--upstream-proxy", "none"])
        #expect(try off.resolve(environment: ["AFPROXY_UPSTREAM_PROXY": "http://p:1"]).upstream.proxy == nil)
    }

    @Test func aMalformedUpstreamProxyNamesItsLineButNotThePassword() {
        var configuration = DaemonConfiguration()
        do {
            try ConfigurationFile.apply(
                "\nupstream-proxy = http://alice:hunter2@proxy.example/", path: "c.conf", to: &configuration)
            Issue.record("accepted a proxy without a port")
        } catch {
            #expect(error.place == "c.conf:2")
            #expect(error.message.hasPrefix("upstream-proxy: "))
            #expect(!error.description.contains("hunter2"))
        }
        #expect(throws: ConfigurationError.self) {
            try ConfigurationFile.apply("upstream-exclude = not a host", path: "c.conf", to: &configuration)
        }
    }
}
