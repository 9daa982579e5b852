import AFProxyModel
import AFProxyRules
import AFProxyTestSupport
import AFProxyTransport
import Foundation
import NIOPosix
import Testing

@testable import AFProxyManager

/// The download service on the in-memory transport: a download's attempts are transfers the test
/// answers itself, its file work runs on the real I/O executor in a directory of the test's own.
@Suite struct DownloadServiceTests {
    private let transport = InMemoryTransport()
    private let scratch: TemporaryDirectory
    private let directory: String
    private let manager: SessionManager

    init() {
        self.init(timers: false)
    }

    /// `timers`: the service's retries wait on real event loops (NIO's shared group).
    private init(timers: Bool) {
        self.scratch = TemporaryDirectory("downloads")
        self.directory = self.scratch.path
        self.manager = SessionManager(
            transport: self.transport, historyCapacity: 4,
            downloads: DownloadSettings(downloadDirectory: self.directory, userAgent: "afproxy-test"),
            timers: timers ? MultiThreadedEventLoopGroup.singleton : nil)
    }

    /// Polls until `condition` holds (the task's file work runs on its lane); fails after 10 s.
    private func eventually(_ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(10)
        while !condition() {
            guard ContinuousClock.now < deadline else {
                Issue.record("condition not met")
                return
            }
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    @Test func aDownloadIsOneTransferWithItsUserAgentAndEndsAsItsFile() async throws {
        let record = try self.manager.downloads.start(DownloadSpec(url: "http://origin.test/file.bin"))
        #expect(record.file?.path == self.directory + "/file.bin")
        try await self.eventually { !self.transport.started.isEmpty }
        let transfer = try #require(self.transport.started.first)
        #expect(transfer.request.request.url == "http://origin.test/file.bin")
        #expect(transfer.request.request.headers.first("user-agent") == "afproxy-test")
        let head = ProxyResponseHead(
            status: 200, reason: "OK", version: "HTTP/1.1", headers: [HTTPHeaderField("Content-Length", "5")])
        self.transport.receiveHead(head, on: transfer)
        #expect(self.transport.receiveBody(Array("hello".utf8), on: transfer) == .taken)
        self.transport.complete(transfer, with: .success)
        try await self.eventually { self.manager.task(id: record.id)?.state == .completed }
        let done = try #require(self.manager.task(id: record.id))
        #expect((done.error, done.download.completed) == (nil, 5))
        #expect(FileManager.default.contents(atPath: self.directory + "/file.bin") == Data("hello".utf8))
        #expect(self.manager.liveCount == 0)
    }

    @Test func aHeldDownloadStartsNoTransferUntilItIsReleased() async throws {
        _ = self.manager.rules.holds.add(HoldConditions(all: true), once: false)
        let record = try self.manager.downloads.start(DownloadSpec(url: "http://origin.test/held.bin"))
        #expect(record.state == .suspended && record.heldBy != nil)
        #expect(self.transport.commands.isEmpty)
        let resumed = try self.manager.resume(id: record.id)
        #expect(resumed.heldBy == nil)
        try await self.eventually { !self.transport.started.isEmpty }
        #expect(self.transport.started.first?.request.request.url == "http://origin.test/held.bin")
    }

    @Test func aPathAnotherDownloadIsMakingIsRefusedBeforeAnyTaskExists() throws {
        _ = try self.manager.downloads.start(DownloadSpec(url: "http://origin.test/same.bin"))
        #expect(throws: ManagerError.pathTaken("another download is already making \(self.directory)/same.bin")) {
            try self.manager.downloads.start(DownloadSpec(url: "http://origin.test/same.bin"))
        }
        #expect(self.manager.liveCount == 1)
    }

    @Test func aFailedAttemptIsRetriedByATimerOnAnEventLoop() async throws {
        let tests = Self(timers: true)
        let record = try tests.manager.downloads.start(DownloadSpec(url: "http://origin.test/retried.bin"))
        try await tests.eventually { tests.transport.started.count == 1 }
        let first = try #require(tests.transport.started.first)
        tests.transport.complete(first, with: .failure(.connectionRefused("refused")))
        try await tests.eventually { tests.transport.started.count == 2 }
        #expect(tests.manager.task(id: record.id)?.state == .running)
        #expect(tests.transport.started.last?.request.request.url == "http://origin.test/retried.bin")
    }

    @Test func theNetworkGoingAwayHoldsDownloadsAndItsReturnContinuesThem() async throws {
        let record = try self.manager.downloads.start(DownloadSpec(url: "http://origin.test/network.bin"))
        try await self.eventually { self.transport.started.count == 1 }
        let first = try #require(self.transport.started.first)
        self.manager.networkChanged(Reachability(status: .unreachable))
        try await self.eventually {
            self.transport.commands(for: first).contains { if case .cancel = $0 { true } else { false } }
        }
        self.transport.complete(first, with: .failure(.canceled("attempt stopped")))
        try await self.eventually { self.manager.task(id: record.id)?.waiting != nil }
        #expect(self.transport.started.count == 1)
        self.manager.networkChanged(Reachability(status: .reachable))
        try await self.eventually { self.transport.started.count == 2 }
        #expect(self.manager.task(id: record.id)?.state == .running)
    }
}
