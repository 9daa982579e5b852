import AFProxyModel
import AFProxyRules
import AFProxyStore
import Logging

/// The throttle rules as the control API changes them: the daemon's `Throttler` (which the
/// transports consult) and the state directory's `throttle.json` (which keeps the host and
/// global rules set at runtime). A change is handed to the file under the same lock, so the
/// writes follow the changes in order; the file writes it off the caller's thread.
package final class ThrottleControl: Sendable {
    package let throttler: Throttler
    /// Where runtime rules are kept; nil: not kept.
    package let file: StateFile<SavedThrottleRules>?
    private let changing = Locked(())

    /// `defaults` from the configuration file; what `throttle.json` in `stateDirectory` kept from
    /// the previous run goes on top of them. Runtime rules are not kept without a directory.
    package convenience init(defaults: [ThrottleRule] = [], stateDirectory: String?, logger: Logger? = nil) {
        self.init(defaults: defaults, file: stateDirectory.map { .throttle(directory: $0, logger: logger) })
    }

    init(defaults: [ThrottleRule] = [], file: StateFile<SavedThrottleRules>? = nil) {
        let kept = file?.load() ?? SavedThrottleRules()
        self.throttler = Throttler(
            rules: ThrottleRuleSet(defaults: defaults, runtime: kept.rules, lifted: Set(kept.lifted)))
        self.file = file
    }

    package convenience init() { self.init(defaults: [], file: nil) }

    package var rules: [ThrottleRule] { self.throttler.rules.rules }

    /// Sets the given directions of `scope`; answers the rule now in force.
    package func set(_ scope: ThrottleScope, down: ByteRate?, up: ByteRate?) -> ThrottleRule {
        self.change { rules in
            if let down { rules.set(scope, rate: down, directions: [.down]) }
            if let up { rules.set(scope, rate: up, directions: [.up]) }
            return rules.rule(for: scope)!
        }
    }

    /// Removes `directions` of the rule of `scope`; false when no rule was in force there.
    package func remove(_ scope: ThrottleScope, directions: Set<ThrottleDirection>) -> Bool {
        self.change { $0.remove(scope, directions: directions) }
    }

    /// The configuration file was read again.
    package func replaceDefaults(_ defaults: [ThrottleRule]) {
        self.change { $0.replaceDefaults(defaults) }
    }

    private func change<R: Sendable>(_ body: (inout ThrottleRuleSet) -> R) -> R {
        self.changing.withLock { _ in
            let result = self.throttler.update(body)
            if let file = self.file {
                let (rules, lifted) = self.throttler.rules.persistent
                file.save(SavedThrottleRules(rules: rules, lifted: lifted))
            }
            return result
        }
    }
}
