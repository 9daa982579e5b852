import AFProxyAPI
import FoundationEssentials

/// The network in words, for `status` and `watch`: `reachable via eth0 (ethernet) since …`,
/// `unreachable since …`, `unknown (not yet answered)`.
enum ReachabilityText {
    static func describe(_ network: Reachability) -> String {
        var text = network.status.rawValue
        if network.status == .reachable, let interface = network.interface {
            text += " via \(interface)"
            if let kind = network.interfaceKind { text += " (\(kind))" }
        }
        if network.status == .unknown {
            let why = network.reason.map { "no longer followed: \($0)" } ?? "the daemon has no answer from the kernel"
            text += " (\(why))"
        }
        if let changedAt = network.changedAt { text += " since \(changedAt.formatted(.iso8601))" }
        return text
    }
}
