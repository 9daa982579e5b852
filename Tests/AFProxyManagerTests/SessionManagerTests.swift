import AFProxyModel
import AFProxyTestSupport
import NIOCore
import Testing

@testable import AFProxyManager

/// The verbs, events and history of the session manager, with a client that records what it is
/// told and the in-memory transport: a test reports the transfer's end itself, as the session
/// thread would.
@Suite struct SessionManagerTests {
    private final class RecordingClient: TaskClient, @unchecked Sendable {
        var deliveries: [ResponseDelivery] = []
        var suspensions: [Bool] = []

        func task(_ task: HTTPTask, deliver delivery: ResponseDelivery) { self.deliveries.append(delivery) }
        func taskWantsRequestBody(_ task: HTTPTask) {}
        func taskAwaitsRequestBody(_ task: HTTPTask) {}
        func task(_ task: HTTPTask, didChangeSuspension suspended: Bool) { self.suspensions.append(suspended) }
    }

    private final class EventLog: @unchecked Sendable {
        private let events = Locked<[TaskEvent.Kind]>([])
        var kinds: [TaskEvent.Kind] { self.events.withLock { $0 } }
        func append(_ kind: TaskEvent.Kind) { self.events.withLock { $0.append(kind) } }
    }

    private let manager = SessionManager(transport: InMemoryTransport(), historyCapacity: 4)
    private let client = RecordingClient()
    private let log = EventLog()

    init() {
        _ = self.manager.events.subscribe { [log] event in log.append(event.event) }
    }

    private func start() -> HTTPTask {
        let request = ProxyRequest(method: "GET", url: "http://origin.test/", headers: [], body: .none, client: "c")
        return self.manager.startTask(request, client: self.client)
    }

    @Test func suspendAndResumeChangeTheTaskTellTheClientAndPublishOncePerChange() throws {
        let task = self.start()
        #expect(try self.manager.suspend(id: task.id).state == .suspended)
        #expect(throws: ManagerError.illegal(IllegalTransition(verb: "suspend", state: .suspended), task: task.id)) {
            try self.manager.suspend(id: task.id)
        }
        #expect(try self.manager.resume(id: task.id).state == .running)
        #expect(self.manager.suspendAll().map(\.id) == [task.id])
        #expect(self.manager.suspendAll().isEmpty)  // nothing left to change
        #expect(self.client.suspensions == [true, false, true])
        #expect(self.log.kinds == [.created, .suspended, .resumed, .suspended])
    }

    @Test func aCanceledTaskCompletesIntoTheHistoryWithItsCode() throws {
        let task = self.start()
        #expect(try self.manager.cancel(id: task.id).state == .canceling)
        #expect(throws: ManagerError.illegal(IllegalTransition(verb: "cancel", state: .canceling), task: task.id)) {
            try self.manager.cancel(id: task.id)
        }
        // The session thread reports the end that the cancel caused.
        task.transfer(task.transfer, didCompleteWith: .failure(.canceled()), metrics: TaskMetrics())
        #expect(self.manager.liveCount == 0)
        let record = try #require(self.manager.task(id: task.id))
        #expect((record.state, record.error, record.errorCode) == (.completed, "canceled", "canceled"))
        #expect(self.client.deliveries.last?.end == .failed(.canceled()))
        #expect(self.log.kinds == [.created, .completed])
        #expect(throws: ManagerError.illegal(IllegalTransition(verb: "resume", state: .completed), task: task.id)) {
            try self.manager.resume(id: task.id)
        }
        #expect(self.manager.stats().served == 1)
    }

    @Test func aSuspendedTaskWhoseUpstreamFailsCompletesFailed() throws {
        let task = self.start()
        _ = try self.manager.suspend(id: task.id)
        let failure = TaskFailure.upstreamBroken("upstream failed: Connection reset by peer")
        task.transfer(task.transfer, didCompleteWith: .failure(failure), metrics: TaskMetrics())
        let record = try #require(self.manager.task(id: task.id))
        #expect((record.state, record.errorCode) == (.completed, "upstream-broken"))
        #expect(self.log.kinds == [.created, .suspended, .completed])
    }

    @Test func unknownIdsAreToldApartFromIllegalVerbs() {
        #expect(throws: ManagerError.unknownTask(42)) { try self.manager.suspend(id: 42) }
        #expect(self.manager.resumeAll().isEmpty)
    }
}
