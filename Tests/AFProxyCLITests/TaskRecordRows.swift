import AFProxyCLI
import AFProxyModel

/// The table takes rows, as `list` decodes them; the tests build whole records, as the daemon has
/// them, and show them through the same conversion `show` and events use.
func rows(_ records: [TaskRecord]) -> [TaskRow] {
    records.map(TaskRow.init)
}
