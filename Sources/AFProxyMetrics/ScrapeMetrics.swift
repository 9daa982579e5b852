import AFProxyModel
import CoreMetrics

/// The metrics set at scrape time from plain values, so that serving traffic does no work for
/// them: tasks started and live tasks (the manager's counts), open client connections, the byte
/// counters, build info and the process's figures.
///
/// Prometheus counters only go up: the started, byte and CPU counters are fed the growth since
/// the last scrape. Bytes come from `SessionStats`, completed tasks' bytes plus the live tasks' bytes so far,
/// which can dip when a live task moves to the history; the counter keeps the highest total seen
/// and adds only what goes beyond it, so a dip is neither subtracted nor counted twice.
final class ScrapeMetrics: Sendable {
    /// What one scrape reads.
    struct Input: Sendable {
        var stats: SessionStats
        /// Tasks started since start, by kind.
        var started: [TaskKind: Int] = [:]
        /// Live tasks by kind, then state.
        var live: [TaskKind: [TaskState: Int]]
        var process: ProcessStats?
        /// Captures running now.
        var captures = 0
        /// Transfers started so far by each curl session, in order.
        var sessionTransfers: [UInt64] = []
    }

    private struct Seen {
        var started: [TaskKind: Int] = [:]
        var bytesUp: Int64 = 0
        var bytesDown: Int64 = 0
        var cpuSeconds: Double = 0
        var sessionTransfers: [UInt64] = []
    }

    /// The live states (a completed task has left the registry).
    static let liveStates: [TaskState] = TaskState.allCases.filter { $0 != .completed }

    private let started: [TaskKind: Counter]
    private let liveTasks: [TaskKind: [TaskState: Gauge]]
    private let connections: Gauge
    private let captures: Gauge
    private let bytesUp: Counter
    private let bytesDown: Counter
    private let cpu: FloatingPointCounter
    private let resident: Gauge
    private let virtual: Gauge
    private let openFDs: Gauge
    private let maxFDs: Gauge
    private let startTime: Gauge
    private let seen = Locked(Seen())
    private let factory: any MetricsFactory
    /// One counter per session, made at the first scrape that names it.
    private let sessionCounters = Locked<[Counter]>([])

    init(factory: any MetricsFactory) {
        self.factory = factory
        self.started = Dictionary(
            uniqueKeysWithValues: TaskKind.allCases.map { kind in
                (
                    kind,
                    Counter(
                        label: MetricCatalog.tasksStarted.name, dimensions: [("kind", kind.rawValue)], factory: factory)
                )
            })
        self.liveTasks = Dictionary(
            uniqueKeysWithValues: TaskKind.allCases.map { kind in
                (
                    kind,
                    Dictionary(
                        uniqueKeysWithValues: Self.liveStates.map { state in
                            (
                                state,
                                Gauge(
                                    label: MetricCatalog.liveTasks.name,
                                    dimensions: [("state", state.rawValue), ("kind", kind.rawValue)], factory: factory)
                            )
                        })
                )
            })
        self.connections = Gauge(label: MetricCatalog.clientConnections.name, factory: factory)
        self.captures = Gauge(label: MetricCatalog.captures.name, factory: factory)
        self.bytesUp = Counter(
            label: MetricCatalog.transferBytes.name, dimensions: [("direction", "up")], factory: factory)
        self.bytesDown = Counter(
            label: MetricCatalog.transferBytes.name, dimensions: [("direction", "down")], factory: factory)
        Gauge(
            label: MetricCatalog.buildInfo.name, dimensions: [("version", AFProxyVersion.current)], factory: factory
        ).record(1)
        self.cpu = FloatingPointCounter(label: MetricCatalog.cpuSeconds.name, factory: factory)
        self.resident = Gauge(label: MetricCatalog.residentMemory.name, factory: factory)
        self.virtual = Gauge(label: MetricCatalog.virtualMemory.name, factory: factory)
        self.openFDs = Gauge(label: MetricCatalog.openFDs.name, factory: factory)
        self.maxFDs = Gauge(label: MetricCatalog.maxFDs.name, factory: factory)
        self.startTime = Gauge(label: MetricCatalog.startTime.name, factory: factory)
    }

    /// Sets every metric from `input`; called under the caller's scrape lock.
    func update(_ input: Input) {
        for (kind, byState) in self.liveTasks {
            for (state, gauge) in byState {
                gauge.record(input.live[kind]?[state] ?? 0)
            }
        }
        self.connections.record(input.stats.openConnections)
        self.captures.record(input.captures)
        let sessions = self.seen.withLock { seen in
            let growth = input.sessionTransfers.enumerated().map { index, count in
                count - min(count, index < seen.sessionTransfers.count ? seen.sessionTransfers[index] : 0)
            }
            seen.sessionTransfers = input.sessionTransfers
            return growth
        }
        self.sessionCounters.withLock { counters in
            while counters.count < sessions.count {
                counters.append(
                    Counter(
                        label: MetricCatalog.sessionTransfers.name, dimensions: [("session", "\(counters.count)")],
                        factory: self.factory))
            }
            for (index, growth) in sessions.enumerated() {
                counters[index].increment(by: Int64(clamping: growth))
            }
        }
        let (started, up, down, cpu) = self.seen.withLock { seen in
            var started: [TaskKind: Int] = [:]
            for (kind, count) in input.started where count > seen.started[kind, default: 0] {
                started[kind] = count - seen.started[kind, default: 0]
                seen.started[kind] = count
            }
            let up = max(0, input.stats.bytesUp - seen.bytesUp)
            let down = max(0, input.stats.bytesDown - seen.bytesDown)
            let cpu = max(0, (input.process?.cpuSeconds ?? 0) - seen.cpuSeconds)
            seen.bytesUp += up
            seen.bytesDown += down
            seen.cpuSeconds += cpu
            return (started, up, down, cpu)
        }
        for (kind, count) in started { self.started[kind]?.increment(by: Int64(count)) }
        if up > 0 { self.bytesUp.increment(by: up) }
        if down > 0 { self.bytesDown.increment(by: down) }
        if cpu > 0 { self.cpu.increment(by: cpu) }
        if let process = input.process {
            self.resident.record(process.residentBytes)
            self.virtual.record(process.virtualBytes)
            self.openFDs.record(process.openFDs)
            self.maxFDs.record(process.maxFDs)
            self.startTime.record(process.startTimeSeconds)
        }
    }
}
