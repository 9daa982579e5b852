/// Every metric afproxy exposes, with its help text and, for histograms, its buckets: one list
/// that `CatalogMetricsFactory` reads and docs/metrics.md mirrors. swift-metrics has no notion of help
/// text, and `promtool check metrics` wants a `# HELP` line for every family, so the factory
/// looks the text up here by the metric's name.
///
/// No label takes a value that grows with traffic: kinds, states, outcomes and directions are
/// closed sets.
package enum MetricCatalog {
    package struct Entry: Sendable {
        package var name: String
        package var help: String
        /// Upper bounds of a histogram's buckets, in seconds; empty for the other types.
        package var buckets: [Double] = []
    }

    package static let tasksStarted = Entry(
        name: "afproxy_tasks_started_total", help: "Tasks started, by kind (data, upload, stream, download).")
    package static let tasksCompleted = Entry(
        name: "afproxy_tasks_completed_total",
        help: "Tasks completed, by kind and outcome: success, or the failure code of the task's errorCode.")
    package static let transferBytes = Entry(
        name: "afproxy_transfer_bytes_total",
        help: "Body bytes relayed, by direction: up (client to origin) and down (origin to client or file).")
    package static let liveTasks = Entry(
        name: "afproxy_live_tasks", help: "Tasks in the live registry now, by state and kind.")
    package static let clientConnections = Entry(
        name: "afproxy_client_connections", help: "Client connections open on the proxy ports now.")
    package static let captures = Entry(
        name: "afproxy_captures", help: "Captures (afproxyctl run) running now.")
    package static let resumes = Entry(
        name: "afproxy_download_resumes_total",
        help: "Broken-off responses continued at the offset reached (resumed-at-offset events), by kind.")
    /// One series per curl session (as many as event loops): how evenly the cores share the work.
    package static let sessionTransfers = Entry(
        name: "afproxy_session_transfers_total",
        help: "Upstream HTTP transfers started, by curl session (one per event loop, numbered from 0).")
    package static let buildInfo = Entry(
        name: "afproxy_build_info", help: "Always 1; the version label says which afproxy runs.")
    /// From 1 ms (a cached origin on loopback) to a minute (the default upstream timeout is 120 s).
    package static let timeToFirstByte = Entry(
        name: "afproxy_time_to_first_byte_seconds",
        help: "Time from the start of a task's transfer to the first byte of the response, by kind.",
        buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60])
    /// From 5 ms (a small response) to an hour (a large download task).
    package static let taskDuration = Entry(
        name: "afproxy_task_duration_seconds",
        help: "Time from a task's creation to its completion, by kind.",
        buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600])

    // The standard process metrics of Prometheus's client libraries, read from /proc/self.
    package static let cpuSeconds = Entry(
        name: "process_cpu_seconds_total", help: "Total user and system CPU time spent in seconds.")
    package static let residentMemory = Entry(
        name: "process_resident_memory_bytes", help: "Resident memory size in bytes.")
    package static let virtualMemory = Entry(
        name: "process_virtual_memory_bytes", help: "Virtual memory size in bytes.")
    package static let openFDs = Entry(name: "process_open_fds", help: "Number of open file descriptors.")
    package static let maxFDs = Entry(name: "process_max_fds", help: "Maximum number of open file descriptors.")
    package static let startTime = Entry(
        name: "process_start_time_seconds", help: "Start time of the process since unix epoch in seconds.")

    package static let all: [Entry] = [
        tasksStarted, tasksCompleted, transferBytes, liveTasks, clientConnections, captures, resumes, sessionTransfers,
        buildInfo,
        timeToFirstByte, taskDuration, cpuSeconds, residentMemory, virtualMemory, openFDs, maxFDs, startTime,
    ]

    static let byName: [String: Entry] = Dictionary(uniqueKeysWithValues: all.map { ($0.name, $0) })
}
