import AFProxyModel
import FoundationEssentials
import Prometheus
import Testing

@testable import AFProxyMetrics

/// The metrics as the registry writes them, fed the way the daemon feeds them.
@Suite struct ExpositionTests {
    let registry = PrometheusCollectorRegistry()
    let events: TaskEventMetrics
    let scrape: ScrapeMetrics

    init() {
        let factory = CatalogMetricsFactory(registry: self.registry)
        self.events = TaskEventMetrics(factory: factory)
        self.scrape = ScrapeMetrics(factory: factory)
    }

    private func record(_ kind: TaskKind, errorCode: String? = nil, ttfbMs: Double? = nil) -> TaskRecord {
        var record = TaskRecord(
            id: 1, kind: kind, state: .completed, method: "GET", url: "http://h/", client: "c",
            createdAt: Date(timeIntervalSinceNow: -0.2))
        record.errorCode = errorCode
        record.error = errorCode
        record.metrics.ttfbMs = ttfbMs
        return record
    }

    private var text: String { self.registry.emitToString() }

    @Test func everyFamilyHasHelpAndType() {
        self.scrape.update(
            .init(stats: SessionStats(), live: [:], process: ProcessStats.current(), sessionTransfers: [0, 0]))
        let text = self.text
        for entry in MetricCatalog.all {
            #expect(text.contains("# HELP \(entry.name) "), "\(entry.name)")
            #expect(text.contains("# TYPE \(entry.name) "), "\(entry.name)")
        }
        #expect(text.contains("afproxy_build_info{version=\"\(AFProxyVersion.current)\"} 1.0\n"))
    }

    @Test func countsEventsByKindAndOutcome() {
        self.events.record(TaskEvent(.completed, task: self.record(.data, ttfbMs: 30)))
        self.events.record(TaskEvent(.completed, task: self.record(.upload, errorCode: "connection-refused")))
        self.events.record(TaskEvent(.resumedAtOffset, task: self.record(.download)))
        let text = self.text
        #expect(text.contains("afproxy_tasks_completed_total{kind=\"data\",outcome=\"success\"} 1\n"))
        #expect(text.contains("afproxy_tasks_completed_total{kind=\"upload\",outcome=\"connection-refused\"} 1\n"))
        #expect(text.contains("afproxy_tasks_completed_total{kind=\"stream\",outcome=\"success\"} 0\n"))
        #expect(text.contains("afproxy_download_resumes_total{kind=\"download\"} 1\n"))
        #expect(text.contains("afproxy_time_to_first_byte_seconds_bucket{kind=\"data\",le=\"0.025\"} 0\n"))
        #expect(text.contains("afproxy_time_to_first_byte_seconds_bucket{kind=\"data\",le=\"0.05\"} 1\n"))
        #expect(text.contains("afproxy_task_duration_seconds_count{kind=\"data\"} 1\n"))
        #expect(text.contains("afproxy_task_duration_seconds_bucket{kind=\"data\",le=\"0.1\"} 0\n"))
    }

    /// One series per curl session, fed what each started since the last scrape.
    @Test func countsTransfersPerSession() {
        self.scrape.update(.init(stats: SessionStats(), live: [:], sessionTransfers: [3, 0]))
        self.scrape.update(.init(stats: SessionStats(), live: [:], sessionTransfers: [5, 2]))
        let text = self.text
        #expect(text.contains("afproxy_session_transfers_total{session=\"0\"} 5\n"))
        #expect(text.contains("afproxy_session_transfers_total{session=\"1\"} 2\n"))
    }

    /// Bytes move from the live tasks to the completed totals; a dip between two scrapes is
    /// neither subtracted nor counted again.
    @Test func byteCountersNeverGoBack() {
        var stats = SessionStats()
        stats.bytesDown = 1000
        stats.bytesUp = 10
        stats.openConnections = 3
        self.scrape.update(.init(stats: stats, live: [.data: [.running: 2], .download: [.suspended: 1]], process: nil))
        stats.bytesDown = 900
        self.scrape.update(.init(stats: stats, live: [:], process: nil))
        #expect(self.text.contains("afproxy_transfer_bytes_total{direction=\"down\"} 1000\n"))
        stats.bytesDown = 1500
        self.scrape.update(
            .init(
                stats: stats, started: [.data: 7], live: [.data: [.running: 2], .download: [.suspended: 1]],
                process: nil))
        let text = self.text
        #expect(text.contains("afproxy_transfer_bytes_total{direction=\"down\"} 1500\n"))
        #expect(text.contains("afproxy_transfer_bytes_total{direction=\"up\"} 10\n"))
        #expect(text.contains("afproxy_live_tasks{state=\"running\",kind=\"data\"} 2.0\n"))
        #expect(text.contains("afproxy_live_tasks{state=\"suspended\",kind=\"download\"} 1.0\n"))
        #expect(text.contains("afproxy_live_tasks{state=\"running\",kind=\"stream\"} 0.0\n"))
        #expect(text.contains("afproxy_client_connections 3.0\n"))
        #expect(text.contains("afproxy_tasks_started_total{kind=\"data\"} 7\n"))
        #expect(text.contains("afproxy_tasks_started_total{kind=\"upload\"} 0\n"))
    }
}
