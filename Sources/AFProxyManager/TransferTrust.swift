import AFProxyModel
import AFProxyRules
import AFProxyTransport

/// What the daemon's own TLS connections to origins trust, from two of the rule book's kinds:
/// the CA bundle besides the system's (`tls-ca-file`) and the pins per host (`pin`), both replaced
/// on reload. Asked alike by a download's attempts, an intercepted request and a `wss://` tunnel,
/// so it belongs to none of them: the session manager holds it and hands it to the download
/// service.
struct TransferTrust: Sendable {
    let security: LiveRules<SecurityPolicy>
    let pins: LiveRules<PinSet>

    /// The CA bundle in force (a pin probe verifies with it).
    var caFile: String? { self.security.ruleSet.caFile }

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
