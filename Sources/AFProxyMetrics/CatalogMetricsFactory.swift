import CoreMetrics
import Prometheus

/// swift-metrics' factory over a swift-prometheus registry, like `PrometheusMetricsFactory`, but
/// with each family's help text and buckets taken from `MetricCatalog`. The daemon's code speaks
/// swift-metrics (`Counter`, `Gauge`, `Timer` with this factory), so nothing of it names the
/// backend; the registry writes the text format. It is not bootstrapped as the process-wide
/// `MetricsSystem` factory: that can be set once per process, and tests make several.
struct CatalogMetricsFactory: MetricsFactory {
    let registry: PrometheusCollectorRegistry

    private static func descriptor(_ label: String) -> MetricNameDescriptor {
        guard let entry = MetricCatalog.byName[label] else {
            preconditionFailure("metric \(label) is not in MetricCatalog")
        }
        return MetricNameDescriptor(metricName: entry.name, unitName: "", helpText: entry.help)
    }

    private static func buckets(_ label: String) -> [Duration] {
        (MetricCatalog.byName[label]?.buckets ?? []).map { .nanoseconds(Int64(($0 * 1e9).rounded())) }
    }

    func makeCounter(label: String, dimensions: [(String, String)]) -> any CounterHandler {
        self.registry.makeCounter(descriptor: Self.descriptor(label), labels: dimensions)
    }

    func makeFloatingPointCounter(label: String, dimensions: [(String, String)]) -> any FloatingPointCounterHandler {
        self.registry.makeCounter(descriptor: Self.descriptor(label), labels: dimensions)
    }

    func makeMeter(label: String, dimensions: [(String, String)]) -> any MeterHandler {
        self.registry.makeGauge(descriptor: Self.descriptor(label), labels: dimensions)
    }

    /// Only gauges are recorded here (`aggregate: false`); histograms are timers.
    func makeRecorder(label: String, dimensions: [(String, String)], aggregate: Bool) -> any RecorderHandler {
        precondition(!aggregate, "\(label): record durations with a Timer")
        return self.registry.makeGauge(descriptor: Self.descriptor(label), labels: dimensions)
    }

    func makeTimer(label: String, dimensions: [(String, String)]) -> any TimerHandler {
        self.registry.makeDurationHistogram(
            descriptor: Self.descriptor(label), labels: dimensions, buckets: Self.buckets(label))
    }

    func destroyCounter(_ handler: any CounterHandler) {
        if let counter = handler as? Prometheus.Counter { self.registry.unregisterCounter(counter) }
    }

    func destroyFloatingPointCounter(_ handler: any FloatingPointCounterHandler) {
        if let counter = handler as? Prometheus.Counter { self.registry.unregisterCounter(counter) }
    }

    func destroyMeter(_ handler: any MeterHandler) {
        if let gauge = handler as? Prometheus.Gauge { self.registry.unregisterGauge(gauge) }
    }

    func destroyRecorder(_ handler: any RecorderHandler) {
        if let gauge = handler as? Prometheus.Gauge { self.registry.unregisterGauge(gauge) }
    }

    func destroyTimer(_ handler: any TimerHandler) {
        if let histogram = handler as? DurationHistogram { self.registry.unregisterDurationHistogram(histogram) }
    }
}
