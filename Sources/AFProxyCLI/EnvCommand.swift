import AFProxyAPI
import ArgumentParser
import FoundationEssentials

/// `afproxyctl env`: the lines that point a shell at the running proxy, `eval "$(afproxyctl env)"`.
/// The address comes from the daemon (`GET /v1/status`), not from a config file: port 0, a
/// `--listen` flag and a socket from systemd all end up where the daemon really listens.
struct Env: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print the http_proxy, https_proxy and no_proxy lines that point a shell at the proxy.",
        discussion: """
            Use as eval "$(afproxyctl env)" (sh, bash, zsh) or afproxyctl env --fish | source (fish). \
            Each variable is set in lower and upper case, as clients read one or the other. no_proxy is \
            empty unless --no-proxy says otherwise: afproxy is there to see every request, local ones too.
            """)

    @ParentCommand var root: AFProxyCtl
    var global: GlobalOptions { self.root.global }
    @Flag(name: .long, help: "Print fish's `set -gx` lines instead of `export`.") var fish = false
    @Option(
        name: .long,
        help: ArgumentHelp("Hosts that go direct, comma-separated (default: none).", valueName: "hosts"))
    var noProxy = ""

    func run() throws {
        let body = try self.global.call("GET", "/v1/status")
        let status = try Console.decoder().decode(DaemonStatus.self, from: Data(body))
        guard let lines = ProxyEnvironment(listen: status.listen, noProxy: self.noProxy)?.lines(fish: self.fish) else {
            Console.error("afproxyctl: the daemon reports no proxy address it listens on")
            throw ExitCode(1)
        }
        Console.output(lines.joined(separator: "\n"))
    }
}

/// The variables `afproxyctl env` prints, from the daemon's bound addresses.
struct ProxyEnvironment: Equatable {
    /// `http://HOST:PORT`, the first bound address, a wildcard one replaced by loopback.
    var proxyURL: String
    var noProxy: String

    init?(listen: [String], noProxy: String) {
        guard let first = listen.first else { return nil }
        self.proxyURL = "http://" + Self.reachable(first)
        self.noProxy = noProxy
    }

    /// A wildcard address accepts on every interface but is no destination: loopback reaches it.
    static func reachable(_ address: String) -> String {
        if address.hasPrefix("0.0.0.0:") { return "127.0.0.1" + address.dropFirst("0.0.0.0".count) }
        if address.hasPrefix("[::]:") { return "[::1]" + address.dropFirst("[::]".count) }
        return address
    }

    func lines(fish: Bool) -> [String] {
        let values = [("http_proxy", self.proxyURL), ("https_proxy", self.proxyURL), ("no_proxy", self.noProxy)]
        return (values + values.map { ($0.0.uppercased(), $0.1) }).map { name, value in
            fish ? "set -gx \(name) \(Self.quoted(value));" : "export \(name)=\(Self.quoted(value))"
        }
    }

    /// Single quotes for both shells: the values come from the daemon and a flag, never trusted
    /// to be free of `$` or spaces.
    static func quoted(_ value: String) -> String {
        "'" + value.replacing("'", with: "'\\''") + "'"
    }
}
