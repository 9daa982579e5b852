import AFProxyModel
import AFProxyStore
import Logging

/// The throttle rules as the control API changes them: the daemon's `Throttler` (which the
/// transports consult) and the state directory's `throttle.json` (which keeps the host and
/// global rules set at runtime), changed together under one lock so the file always holds
/// what is in force.
package final class ThrottleControl: Sendable {
    package let throttler: Throttler
    private let store: ThrottleStore?
    private let logger: Logger?
    private let writing = Locked(())

    /// `defaults` from the configuration file; what `store` kept from the previous run
    /// goes on top of them.
    /// Runtime rules are kept in `stateDirectory` (`throttle.json`); nil: not kept.
    package convenience init(defaults: [ThrottleRule] = [], stateDirectory: String?, logger: Logger? = nil) {
        self.init(defaults: defaults, store: stateDirectory.map { ThrottleStore(directory: $0) }, logger: logger)
    }

    init(defaults: [ThrottleRule] = [], store: ThrottleStore? = nil, logger: Logger? = nil) {
        var kept = ThrottleStore.Contents()
        if let store {
            do {
                kept = try store.load()
            } catch {
                logger?.warning("throttle rules of the previous run not restored: \(error)")
            }
        }
        self.throttler = Throttler(
            rules: ThrottleRuleSet(defaults: defaults, runtime: kept.rules, lifted: Set(kept.lifted)))
        self.store = store
        self.logger = logger
    }

    package convenience init() { self.init(defaults: [], store: nil) }

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
        self.writing.withLock { _ in
            let result = self.throttler.update(body)
            self.persist()
            return result
        }
    }

    private func persist() {
        guard let store = self.store else { return }
        let (rules, lifted) = self.throttler.rules.persistent
        do {
            try store.save(ThrottleStore.Contents(rules: rules, lifted: lifted))
        } catch {
            self.logger?.error("throttle rules not saved: \(error)")
        }
    }
}
