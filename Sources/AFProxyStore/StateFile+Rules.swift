import AFProxyModel
import AFProxyRules
import Logging

/// The rule sets that survive a restart, and the file each is kept in.
extension StateFile where Value == SavedThrottleRules {
    /// `throttle.json`: the host and global rules set at runtime.
    package static func throttle(directory: String, logger: Logger? = nil) -> StateFile {
        StateFile(directory: directory, name: "throttle.json", logger: logger)
    }
}

extension StateFile where Value == HoldRuleSet {
    /// `holds.json`: the whole `HoldRuleSet`, its `nextID` with it, so an id is never given twice.
    package static func holds(directory: String, logger: Logger? = nil) -> StateFile {
        StateFile(directory: directory, name: "holds.json", logger: logger)
    }
}

/// What `throttle.json` holds. Task rules are not kept: the tasks they name end with the daemon.
package struct SavedThrottleRules: Sendable, Codable, Equatable {
    package var rules: [ThrottleRule]
    /// Defaults of the configuration file lifted at runtime (`unthrottle --global`).
    package var lifted: [ThrottleScope]

    package init(rules: [ThrottleRule] = [], lifted: [ThrottleScope] = []) {
        self.rules = rules
        self.lifted = lifted
    }
}
