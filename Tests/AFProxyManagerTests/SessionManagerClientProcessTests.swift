import AFProxyModel
import AFProxyTestSupport
import Testing

@testable import AFProxyManager

/// A task's client process reaches its history record whenever the lookup ends: before the task
/// completed, after it, or while it was completing (after its record was taken, before the
/// manager asked to hear of the lookup), which is where a quick request lost it under load.
@Suite struct SessionManagerClientProcessTests {
    private final class QuietClient: TaskClient, @unchecked Sendable {
        func task(_ task: HTTPTask, deliver delivery: ResponseDelivery) {}
        func taskWantsRequestBody(_ task: HTTPTask) {}
        func taskAwaitsRequestBody(_ task: HTTPTask) {}
        func task(_ task: HTTPTask, didChangeSuspension suspended: Bool) {}
    }

    private let manager = SessionManager(transport: InMemoryTransport(), historyCapacity: 4)
    private let client = QuietClient()
    private let curl = ClientProcess(pid: 42, executable: "/usr/bin/curl", uid: 1000)

    private func start(_ slot: ClientProcessSlot) -> HTTPTask {
        let request = ProxyRequest(
            method: "GET", url: "http://origin.test/", headers: [], body: .none, client: "127.0.0.1:5", process: slot)
        return self.manager.startTask(request, client: self.client)
    }

    private func complete(_ task: HTTPTask) {
        task.transfer(task.transfer, didCompleteWith: .failure(.canceled()), metrics: TaskMetrics())
    }

    @Test func aLookupThatEndedBeforeTheCompletionIsInTheRecord() throws {
        let slot = ClientProcessSlot()
        let task = self.start(slot)
        slot.settle(self.curl)
        self.complete(task)
        #expect(try #require(self.manager.task(id: task.id)).clientProcess == self.curl)
    }

    @Test func aLookupThatEndsAfterTheCompletionReachesTheHistory() throws {
        let slot = ClientProcessSlot()
        let task = self.start(slot)
        self.complete(task)
        #expect(self.manager.clientProcess(ofCompleted: task.id) == nil)
        slot.settle(self.curl)
        #expect(self.manager.clientProcess(ofCompleted: task.id) == self.curl)
        #expect(try #require(self.manager.task(id: task.id)).clientProcess == self.curl)
    }

    /// The window: the completed record is taken without the process, the lookup settles (here:
    /// while the `completed` event is published, which runs between the two), and only then does
    /// the manager look at the slot. It used to see it settled and leave the record as it was.
    @Test func aLookupThatEndsWhileTheTaskCompletesReachesTheHistory() throws {
        let slot = ClientProcessSlot()
        let task = self.start(slot)
        let curl = self.curl
        _ = self.manager.events.subscribe([.completed]) { event in
            #expect(event.task.clientProcess == nil)
            slot.settle(curl)
        }
        self.complete(task)
        #expect(self.manager.clientProcess(ofCompleted: task.id) == curl)
    }

    @Test func aLookupThatFindsNothingLeavesTheRecordWithout() throws {
        let slot = ClientProcessSlot()
        let task = self.start(slot)
        self.complete(task)
        slot.settle(nil)
        #expect(self.manager.clientProcess(ofCompleted: task.id) == nil)
    }
}
