import AFProxyManager
import AFProxyModel
import Prometheus

/// The daemon's metrics: one swift-prometheus registry, fed by the event bus (`TaskEventMetrics`)
/// and, at each scrape, by the session's figures and /proc (`ScrapeMetrics`). Both the control
/// socket's `GET /metrics` and the `metrics-listen` port answer with `exposition()`.
package final class DaemonMetrics: Sendable {
    /// The Prometheus text format, version 0.0.4.
    package static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    private let registry = PrometheusCollectorRegistry()
    private let manager: SessionManager
    private let openConnections: @Sendable () -> Int
    private let captures: @Sendable () -> Int
    private let sessionTransfers: @Sendable () -> [UInt64]
    private let events: TaskEventMetrics
    private let scrape: ScrapeMetrics

    /// Subscribes to `manager`'s events at once; `openConnections`, `captures` (how many run) and
    /// `sessionTransfers` (each curl session's transfers so far) are read at each scrape.
    package init(
        manager: SessionManager, captures: @escaping @Sendable () -> Int = { 0 },
        sessionTransfers: @escaping @Sendable () -> [UInt64] = { [] },
        openConnections: @escaping @Sendable () -> Int
    ) {
        self.manager = manager
        self.openConnections = openConnections
        self.captures = captures
        self.sessionTransfers = sessionTransfers
        let factory = CatalogMetricsFactory(registry: self.registry)
        self.events = TaskEventMetrics(factory: factory)
        self.scrape = ScrapeMetrics(factory: factory)
        // The bus holds the subscriber for the daemon's life; it references the metrics, not the manager.
        _ = self.events.subscribe(to: manager.events)
    }

    /// Every metric in the text format, as of now.
    package func exposition() -> [UInt8] {
        var stats = self.manager.stats()
        stats.openConnections = self.openConnections()
        let counts = self.manager.taskCounts()
        self.scrape.update(
            .init(
                stats: stats, started: counts.started, live: counts.live, process: ProcessStats.current(),
                captures: self.captures(), sessionTransfers: self.sessionTransfers()))
        return self.registry.emitToBuffer()
    }
}
