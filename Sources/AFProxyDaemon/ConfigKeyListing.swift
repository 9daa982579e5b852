/// `afproxy --list-config-keys`: every key the daemon reads, one a line as `KEY<TAB>ENV<TAB>FLAG`,
/// from the table the parser itself applies (`DaemonConfiguration.keys`). The man page, the
/// configuration reference and the annotated config file are generated from or checked against
/// it (scripts/gen-man, Tests/integration/test_docs_cli.py), so a new key cannot go undocumented.
enum ConfigKeyListing {
    static var text: String {
        DaemonConfiguration.keys.map { key in "\(key.name)\t\(key.environment)\t--\(key.flag)" }
            .joined(separator: "\n")
    }
}
