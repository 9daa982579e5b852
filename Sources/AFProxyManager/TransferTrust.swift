import AFProxyCurl
import AFProxyModel
import AFProxyRules

/// What the daemon's own TLS connections to origins trust: the CA bundle besides the system's
/// (`tls-ca-file`, replaced on reload) and the pins per host (the rule book's `pin` rules). Asked
/// alike by a download's attempts, an intercepted request and a `wss://` tunnel, so it belongs to
/// none of them: the session manager holds it and hands it to the download service.
final class TransferTrust: Sendable {
    private let policy: Locked<SecurityPolicy>
    private let pins: LiveRules<PinSet>

    init(_ policy: SecurityPolicy, pins: LiveRules<PinSet>) {
        self.policy = Locked(policy)
        self.pins = pins
    }

    /// The CA bundle in force (a pin probe verifies with it).
    var caFile: String? { self.policy.withLock { $0.caFile } }

    /// A reload's policy: new TLS connections use it.
    func update(_ policy: SecurityPolicy) {
        self.policy.withLock { $0 = policy }
    }

    /// What a download's next attempt connects with: the CA bundle in force, the download's own
    /// pins in place of its host's pin rules, and its `insecure`.
    func options(for spec: DownloadSpec) -> TransferOptions {
        let host = LoopbackHost.host(ofURL: spec.url) ?? ""
        let hostPins = self.pins.ruleSet.policy(for: host)
        let pins = spec.pins.map { $0.joined(separator: ";") } ?? hostPins?.pins
        var options = TransferOptions.download(caFile: self.caFile, pins: pins, insecure: spec.insecure)
        // A download's own pins (`--pin`) do not stand alone; its host's `standalone` line does.
        options.pinsStandalone = spec.pins == nil && (hostPins?.standalone ?? false)
        return options
    }

    /// What an intercepted request to `host` (or a `wss://` tunnel to it) connects with: the CA
    /// bundle in force and the host's pins.
    func interceptedOptions(host: String) -> TransferOptions {
        .intercepted(caFile: self.caFile, pins: self.pins.ruleSet.policy(for: host))
    }
}
