import Testing

@testable import AFProxyDaemon

/// The key table is the one declaration of each setting: these hold the command line, the
/// environment names and the shown defaults to it.
@Suite struct ConfigKeyTests {
    /// A default shown in `--help` is the one the daemon has: read back through its key, it
    /// leaves the built-in defaults as they were.
    @Test func everyShownDefaultIsTheBuiltInOne() throws {
        var shown = 0
        for key in DaemonConfiguration.keys {
            guard let value = key.defaultValue else { continue }
            var configuration = DaemonConfiguration()
            try key.apply(&configuration, value)
            #expect(configuration == DaemonConfiguration(), "\(key.name) = \(value) is not the default")
            #expect(key.helpText.contains("default \(value))"), "\(key.name): \(key.helpText)")
            shown += 1
        }
        #expect(shown >= 26)
    }

    /// Every key has its option, and every option that is not about the config file itself names
    /// a key: a flag given once comes back as that key's one override, in the order given.
    @Test func everyKeyHasAnOptionAndEveryOptionNamesAKey() throws {
        for key in DaemonConfiguration.keys where key.name != "listen" {
            let command = try AFProxyCommand.parse(["--\(key.flag)", "some value"])
            let flags = command.overrides.flags.map { "\($0.name)=\($0.value)" }
            #expect(flags == ["\(key.name)=some value"], "--\(key.flag)")
        }
        let listen = try AFProxyCommand.parse(["--listen", "127.0.0.1:1", "--listen", "[::1]:2"]).overrides
        #expect(listen.listen == ["127.0.0.1:1", "[::1]:2"] && listen.flags.isEmpty)
        // The options that are no key: the config file's own, and the hidden listing.
        let command = try AFProxyCommand.parse([])
        let apart: Set = ["_listen", "_config", "_checkConfig", "_listConfigKeys"]
        for child in Mirror(reflecting: command).children {
            guard let label = child.label, !apart.contains(label) else { continue }
            #expect(DaemonConfiguration.key(option: String(label.dropFirst())) != nil, "\(label) names no key")
        }
        let repeated = try AFProxyCommand.parse(["--deny-hosts", "a.test", "--pin", "p", "--deny-hosts", "b.test"])
        #expect(repeated.overrides.flags.filter { $0.name == "deny-hosts" }.map(\.value) == ["a.test", "b.test"])
    }

    @Test func environmentNamesAreTheKeysInCapitals() {
        #expect(DaemonConfiguration.key(named: "max-connections")?.environment == "AFPROXY_MAX_CONNECTIONS")
        #expect(DaemonConfiguration.key(named: "web-listen")?.environment == "AFPROXY_WEB_LISTEN")
        #expect(DaemonConfiguration.key(named: "web-listen")?.flag == "web")
        #expect(DaemonConfiguration.key(option: "tlsCAFile")?.name == "tls-ca-file")
        #expect(DaemonConfiguration.key(option: "web")?.name == "web-listen")
    }

    @Test func helpCarriesTheDefaultOnce() {
        let key = DaemonConfiguration.key(named: "max-connections")!
        #expect(key.helpText == "Client connections at most; over it, 503 (default 4096).")
        let listen = DaemonConfiguration.key(named: "listen")!
        #expect(listen.helpText == "Address to listen on, HOST:PORT (repeatable; default 127.0.0.1:3128).")
        // --help wraps its lines: read it as words.
        let help = AFProxyCommand.helpMessage().split(whereSeparator: \.isWhitespace).joined(separator: " ")
        #expect(help.contains("over it, 503 (default 4096)."))
        #expect(help.contains("splice(2) in the kernel; no keeps every tunnel on the NIO relay (default yes)."))
    }
}
