import AFProxyManager
import AFProxyModel
import CoreMetrics
import FoundationEssentials

/// What the metrics learn from the event bus: `completed` (the outcome counter and the two
/// histograms) and `resumed-at-offset`. The manager builds the `completed` record for its
/// history anyway, so listening to it costs the subscriber call only; `resumed-at-offset` is rare.
/// Not `created`: a subscriber to it would make every request build a record nobody else reads,
/// so tasks started are counted by the manager and read at scrape time (`ScrapeMetrics`).
/// Every series is made up front, one per label set, so that the subscriber, called on the
/// publishing thread, only looks up a dictionary that never changes and increments an atomic.
final class TaskEventMetrics: Sendable {
    private let completed: [TaskKind: [String: Counter]]
    private let resumes: [TaskKind: Counter]
    private let timeToFirstByte: [TaskKind: Timer]
    private let duration: [TaskKind: Timer]

    init(factory: any MetricsFactory) {
        func each<T>(_ make: (TaskKind) -> T) -> [TaskKind: T] {
            Dictionary(uniqueKeysWithValues: TaskKind.allCases.map { ($0, make($0)) })
        }
        self.completed = each { kind in
            Dictionary(
                uniqueKeysWithValues: TaskOutcome.all.map { outcome in
                    (
                        outcome,
                        Counter(
                            label: MetricCatalog.tasksCompleted.name,
                            dimensions: [("kind", kind.rawValue), ("outcome", outcome)], factory: factory)
                    )
                })
        }
        self.resumes = each {
            Counter(label: MetricCatalog.resumes.name, dimensions: [("kind", $0.rawValue)], factory: factory)
        }
        self.timeToFirstByte = each {
            Timer(label: MetricCatalog.timeToFirstByte.name, dimensions: [("kind", $0.rawValue)], factory: factory)
        }
        self.duration = each {
            Timer(label: MetricCatalog.taskDuration.name, dimensions: [("kind", $0.rawValue)], factory: factory)
        }
    }

    /// Answers the bus's token; the caller unsubscribes with it.
    func subscribe(to events: EventBus) -> Int {
        events.subscribe([.completed, .resumedAtOffset]) { [self] event in
            self.record(event)
        }
    }

    func record(_ event: TaskEvent) {
        let task = event.task
        switch event.event {
        case .completed:
            let outcome = TaskOutcome.label(errorCode: task.errorCode, error: task.error)
            self.completed[task.kind]?[outcome]?.increment()
            if let ttfb = task.metrics.ttfbMs {
                self.timeToFirstByte[task.kind]?.recordNanoseconds(Self.nanoseconds(milliseconds: ttfb))
            }
            let seconds = Date().timeIntervalSince(task.createdAt)
            self.duration[task.kind]?.recordNanoseconds(Self.nanoseconds(milliseconds: seconds * 1000))
        case .resumedAtOffset:
            self.resumes[task.kind]?.increment()
        case .created, .suspended, .resumed, .progress, .held, .edited:
            break
        }
    }

    private static func nanoseconds(milliseconds: Double) -> Int64 {
        Int64(max(0, min(milliseconds * 1e6, Double(Int64.max / 2))))
    }
}
