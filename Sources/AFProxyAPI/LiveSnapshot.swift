import AFProxyModel

/// One line of `GET /v1/live`, the feed for pages and tables that show the tasks as they are: what
/// changed since the previous line, a few times a second, rather than every event as it happens.
/// A person cannot read a thousand events a second and a page need not draw them; encoding each
/// for every such reader cost the proxy a third of its requests a second under load, where a
/// snapshot costs per live task that moved, whatever the request rate.
package struct LiveSnapshot: Sendable, Codable, Equatable {
    package var event = "snapshot"
    /// Live tasks that are new or changed since the previous line (all of them in the first).
    package var tasks: [TaskRecord]
    /// The id of every live task now: a reader drops the tasks it shows that are not here.
    package var live: [Int]
    /// Tasks that completed since the previous line, the newest `LiveCompletions.limit` of them.
    package var completed: [TaskRecord]
    /// Tasks that completed since the previous line beyond those (counted in `stats` too).
    package var completedNotShown: Int
    package var stats: SessionStats

    package init(tasks: [TaskRecord], live: [Int], completed: [TaskRecord], completedNotShown: Int, stats: SessionStats)
    {
        self.tasks = tasks
        self.live = live
        self.completed = completed
        self.completedNotShown = completedNotShown
        self.stats = stats
    }
}
