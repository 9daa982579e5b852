import AFProxyAPI
import AFProxyModel
import AFProxyStore
import ArgumentParser

#if canImport(Glibc)
import Glibc
#endif

/// `afproxy`: the daemon's command line. Flags override `AFPROXY_*` environment variables, which
/// override the config file, which overrides the built-in defaults.
package struct AFProxyCommand: AsyncParsableCommand {
    package static let configuration = CommandConfiguration(
        commandName: "afproxy",
        abstract: "A local HTTP proxy daemon whose every request is a task you can watch and steer.",
        discussion: """
            Point applications at it with http_proxy=http://127.0.0.1:3128 and steer their requests \
            with afproxyctl. Runs in the foreground; under systemd it is a Type=notify service. \
            SIGHUP reads the configuration again; SIGTERM or SIGINT stops accepting, gives running \
            tasks --grace-period seconds to finish, then exits 0.
            """,
        version: AFProxyVersion.current + Daemon.buildNote
    )

    @Option(name: .long, help: .key("listen"))
    var listen: [String] = []

    @Option(name: .long, help: .key("control-socket"))
    var controlSocket: String?

    @Option(
        name: .long, help: ArgumentHelp("Config file (key = value lines; see config/afproxy.conf).", valueName: "path"))
    var config: String?

    @Option(
        name: .long,
        help: ArgumentHelp("Validate a config file, print the result and exit (0 valid, 1 not).", valueName: "path"))
    var checkConfig: String?

    @Option(name: .long, help: .key("max-connections"))
    var maxConnections: String?

    @Option(name: .long, help: .key("max-header-bytes"))
    var maxHeaderBytes: String?

    @Option(name: .long, help: .key("idle-timeout"))
    var idleTimeout: String?

    @Option(name: .long, help: .key("header-timeout"))
    var headerTimeout: String?

    @Option(name: .long, help: .key("body-timeout"))
    var bodyTimeout: String?

    @Option(name: .long, help: .key("connect-timeout"))
    var connectTimeout: String?

    @Option(name: .long, help: .key("upstream-timeout"))
    var upstreamTimeout: String?

    @Option(name: .long, help: .key("tunnel-idle-timeout"))
    var tunnelIdleTimeout: String?

    @Option(name: .long, help: .key("tunnel-splice"))
    var tunnelSplice: String?

    @Option(name: .long, help: .key("history-size"))
    var historySize: String?

    @Option(name: .long, help: .key("buffer-budget"))
    var bufferBudget: String?

    @Option(name: .long, help: .key("record-max-total"))
    var recordMaxTotal: String?

    @Option(name: .long, help: .key("threads"))
    var threads: String?

    @Option(name: .long, help: .key("log-level"))
    var logLevel: String?

    @Option(name: .long, help: .key("grace-period"))
    var gracePeriod: String?

    @Option(name: .long, help: .key("log-completed-tasks"))
    var logCompletedTasks: String?

    @Option(name: .long, help: .key("log-target"))
    var logTarget: String?

    @Option(name: .long, help: .key("allow-connect-port"))
    var allowConnectPort: [String] = []

    @Option(name: .long, help: .key("via-name"))
    var viaName: String?

    @Option(name: .long, help: .key("state-dir"))
    var stateDir: String?

    @Option(name: .long, help: .key("download-dir"))
    var downloadDir: String?

    @Option(name: .long, help: .key("ca-dir"))
    var caDir: String?

    @Option(name: .long, help: .key("max-active-downloads"))
    var maxActiveDownloads: String?

    @Option(name: .long, help: .key("download-retries"))
    var downloadRetries: String?

    @Option(name: .long, help: .key("transparent-resume"))
    var transparentResume: String?

    @Option(name: .long, help: .key("resume-attempts"))
    var resumeAttempts: String?

    @Option(name: .customLong("tls-ca-file"), help: .key("tls-ca-file"))
    var tlsCAFile: String?

    @Option(name: .long, help: .key("pin"))
    var pin: [String] = []

    @Option(name: .customLong("throttle-global"), help: .key("throttle-global"))
    var throttleGlobal: [String] = []

    @Option(name: .customLong("throttle-host"), help: .key("throttle-host"))
    var throttleHost: [String] = []

    @Option(name: .long, help: .key("network-loss"))
    var networkLoss: String?

    @Option(name: .long, help: .key("metrics-listen"))
    var metricsListen: String?
    @Option(name: .long, help: .key("socks-listen"))
    var socksListen: String?

    @Option(name: .customLong("web"), help: .key("web-listen"))
    var web: String?

    @Option(name: .long, help: .key("allow-clients"))
    var allowClients: [String] = []

    @Option(name: .long, help: .key("proxy-auth-file"))
    var proxyAuthFile: String?

    @Option(name: .long, help: .key("deny-hosts"))
    var denyHosts: [String] = []

    @Option(name: .long, help: .key("allow-hosts"))
    var allowHosts: [String] = []

    @Option(name: .long, help: .key("intercept-hosts"))
    var interceptHosts: [String] = []

    @Option(name: .long, help: .key("intercept-exclude"))
    var interceptExclude: [String] = []

    @Option(name: .long, help: .key("intercept-auto-passthrough"))
    var interceptAutoPassthrough: String?

    @Option(name: .long, help: .key("intercept-passthrough-time"))
    var interceptPassthroughTime: String?

    @Option(name: .long, help: .key("deny-private-destinations"))
    var denyPrivateDestinations: String?

    @Option(name: .long, help: .key("upstream-proxy"))
    var upstreamProxy: String?

    @Option(name: .long, help: .key("upstream-exclude"))
    var upstreamExclude: [String] = []

    /// For scripts/gen-man and the tests that keep the documentation complete; not for users.
    @Flag(name: .long, help: .hidden) var listConfigKeys = false

    package init() {}

    package func run() async throws {
        if self.listConfigKeys { return print(ConfigKeyListing.text) }
        let environment = ProcessEnvironment.current()
        if let path = self.checkConfig {
            var configuration = DaemonConfiguration()
            do {
                try ConfigurationFile.apply(try Self.read(path), path: path, to: &configuration)
                print("\(path): valid")
                return
            } catch {
                Self.fail("\(error)")
            }
        }
        let configuration: DaemonConfiguration
        do {
            configuration = try self.resolve(environment: environment)
        } catch {
            Self.fail("\(error)")
        }
        let overrides = self.overrides
        do {
            try await Daemon(configuration: configuration, environment: environment) { () throws(ConfigurationError) in
                try overrides.resolve(environment: environment)
            }.run()
        } catch {
            Self.fail("\(error)")
        }
    }

    func resolve(environment: [String: String]) throws(ConfigurationError) -> DaemonConfiguration {
        try self.overrides.resolve(environment: environment)
    }

    /// What the command line says, kept to resolve the configuration again on SIGHUP: every
    /// option that names a key (`DaemonConfiguration.key(option:)`), read by reflection so that no
    /// list of them is kept by hand beside the options; a test parses each key's flag and finds it
    /// here. `--listen` is apart: its addresses replace the configured ones together.
    var overrides: Overrides {
        var flags: [(name: String, value: String)] = []
        for child in Mirror(reflecting: self).children {
            guard let label = child.label, label != "_listen", let option = child.value as? any KeyOption,
                let key = DaemonConfiguration.key(option: String(label.dropFirst()))
            else { continue }
            flags += option.texts.map { (key.name, $0) }
        }
        return Overrides(config: self.config, listen: self.listen, flags: flags)
    }

    struct Overrides: Sendable {
        var config: String?
        var listen: [String]
        var flags: [(name: String, value: String)]

        /// Defaults, then the config file, then `AFPROXY_*` variables, then the flags.
        func resolve(environment: [String: String]) throws(ConfigurationError) -> DaemonConfiguration {
            var configuration = DaemonConfiguration()
            if let path = self.config ?? environment["AFPROXY_CONFIG"] {
                try ConfigurationFile.apply(try AFProxyCommand.read(path), path: path, to: &configuration)
            }
            try ConfigurationFile.applyEnvironment(environment, to: &configuration)
            for (name, value) in self.flags {
                do {
                    try DaemonConfiguration.key(named: name)!.apply(&configuration, value)
                } catch {
                    throw ConfigurationError(error.message, place: "--\(name)")
                }
            }
            if !self.listen.isEmpty {
                for address in self.listen {
                    do { _ = try ListenAddress.parse(address) } catch {
                        throw ConfigurationError(error.message, place: "--listen")
                    }
                }
                configuration.listen = self.listen
            }
            return configuration
        }
    }

    /// Read by hand, not by Foundation's `Data(contentsOf:)`: that refuses a character device
    /// (`--config /dev/null`, an empty config, answered "Permission denied"), and LeakSanitizer
    /// saw it leave its 4 KiB read buffer behind.
    static func read(_ path: String) throws(ConfigurationError) -> String {
        guard let file = fopen(path, "r") else {
            throw ConfigurationError("cannot read config file: \(String(cString: strerror(errno)))", place: path)
        }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = fread(&chunk, 1, chunk.count, file)
            if count <= 0 { break }
            bytes.append(contentsOf: chunk[0..<count])
        }
        if ferror(file) != 0 {
            throw ConfigurationError("cannot read config file: \(String(cString: strerror(errno)))", place: path)
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    static func fail(_ message: String) -> Never {
        let line = "afproxy: \(message)\n"
        _ = line.withCString { write(2, $0, strlen($0)) }
        Glibc.exit(1)
    }
}

/// An option of a key as its texts: none, one, or one per repetition (each adds, as the key's
/// lines in the config file do).
protocol KeyOption {
    var texts: [String] { get }
}

protocol KeyOptionValue {
    var texts: [String] { get }
}

extension Optional: KeyOptionValue where Wrapped == String {
    var texts: [String] { self.map { [$0] } ?? [] }
}

extension Array: KeyOptionValue where Element == String {
    var texts: [String] { self }
}

extension Option: KeyOption where Value: KeyOptionValue {
    var texts: [String] { self.wrappedValue.texts }
}

extension ArgumentHelp {
    /// A key's help, its default included, from its one declaration.
    static func key(_ name: String) -> ArgumentHelp {
        let key = DaemonConfiguration.key(named: name)!
        return ArgumentHelp(key.helpText, valueName: key.valueName)
    }
}
