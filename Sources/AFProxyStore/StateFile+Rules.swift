import AFProxyRules
import Logging

/// A state file keeps a rule kind's runtime rules: the rule book's `LiveRules` loads and saves
/// them through it.
extension StateFile: RuleStore {}

extension StateFiles {
    /// The file of rule kind `Kind` in `directory` (`Kind.stateFileName`); nil for a kind from the
    /// configuration only.
    package static func file<Kind: RuleSet>(
        for kind: Kind.Type, directory: String, logger: Logger? = nil
    ) -> StateFile<Kind.Saved>? {
        Kind.stateFileName.map { StateFile(directory: directory, name: $0, logger: logger) }
    }
}
