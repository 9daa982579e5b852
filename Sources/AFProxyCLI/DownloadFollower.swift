import AFProxyAPI
import ArgumentParser
import FoundationEssentials
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// `download --wait`: polls one download task until it completes, drawing its progress on
/// stderr, and exits as docs/afproxyctl.md says: 0 and the final path, 1 and the reason, 130 on Ctrl-C
/// with the download still running in the daemon. A daemon that restarts meanwhile is waited for
/// (`ReconnectWindow`), and the same task followed again.
///
/// Progress goes to stderr and the path to stdout, as curl does, so that
/// `path=$(afproxyctl download --wait URL)` gets the path alone while the bar stays in view.
struct DownloadFollower {
    var global: GlobalOptions
    var id: Int
    var json: Bool

    func run() throws {
        Interrupt.catchIt()
        let terminal = isatty(2) == 1
        // A terminal's bar moves smoothly at 4 redraws a second; a log wants a line a second.
        let interval = terminal ? 0.25 : 1.0
        var client = self.global.client
        // Ctrl-C ends a request that hangs; any other interruption of it is retried.
        client.interrupted = { Interrupt.received.load(ordering: .relaxed) }
        var rate = TransferRate()
        var drawn = false
        var window = ReconnectWindow()
        while true {
            guard let (task, body) = try self.poll(client, drawn: drawn && terminal, window: &window) else {
                if !Self.sleep(ReconnectWindow.delay) { throw self.interrupted(drawn: drawn && terminal) }
                continue
            }
            rate.add(time: Self.monotonicSeconds(), bytes: task.download.completed)
            let line = DownloadProgressLine(task: task, rate: rate)
            if terminal {
                Console.errorText("\r" + line.terminal(width: Self.terminalWidth()) + "\u{1B}[K")
                drawn = true
            } else {
                Console.error("download \(task.id): \(line.plain)")
            }
            if task.state == .completed {
                if terminal { Console.errorText("\n") }
                return try self.finish(task, body)
            }
            if !Self.sleep(interval) { throw self.interrupted(drawn: drawn && terminal) }
        }
    }

    /// One `GET /v1/tasks/ID`; nil: the daemon is away, try again shortly. A daemon that stays
    /// away for the whole `ReconnectWindow`, or that answers it does not know the task, ends the
    /// wait with exit code 1: the outcome is unknown, which is not a success.
    private func poll(
        _ client: ControlClient, drawn: Bool, window: inout ReconnectWindow
    ) throws -> (TaskRecord, [UInt8])? {
        let response: ControlClient.Response
        do {
            response = try client.request("GET", "/v1/tasks/\(self.id)")
        } catch {
            // Ctrl-C interrupts a request that hangs (the handler does not restart system calls).
            if Interrupt.received.load(ordering: .relaxed) { throw self.interrupted(drawn: drawn) }
            let reason: String
            switch error {
            case .unreachable(let text), .protocolError(let text): reason = text
            }
            return try self.away(client, reason: reason, drawn: drawn, window: &window)
        }
        // A restarted daemon answers before it has restored its downloads: not a verdict yet.
        if response.status == 404 && window.isWaiting {
            return try self.away(client, reason: "download \(self.id) not restored yet", drawn: drawn, window: &window)
        }
        guard (200..<300).contains(response.status) else {
            let message =
                (try? JSONDecoder().decode(ControlErrorBody.self, from: Data(response.body)).error)
                ?? String(decoding: response.body, as: UTF8.self)
            if drawn { Console.errorText("\n") }
            Console.error("afproxyctl: download \(self.id) cannot be followed: \(message)")
            throw ExitCode(1)
        }
        window.reached()
        return (try Console.decoder().decode(TaskRecord.self, from: Data(response.body)), response.body)
    }

    /// The daemon did not answer for the task: nil to try again, or exit 1 once the window is over.
    private func away(
        _ client: ControlClient, reason: String, drawn: Bool, window: inout ReconnectWindow
    ) throws -> (TaskRecord, [UInt8])? {
        switch window.failed(now: Self.monotonicSeconds()) {
        case .retry(let announce):
            if announce {
                if drawn { Console.errorText("\n") }
                Console.error(
                    "afproxyctl: lost afproxy at \(client.socketPath) (\(reason)); waiting up to "
                        + "\(Int(window.limit)) s for it to come back with download \(self.id)")
            }
            return nil
        case .giveUp:
            if drawn { Console.errorText("\n") }
            Console.error(
                "afproxyctl: lost afproxy at \(client.socketPath) while waiting for download \(self.id) (\(reason)); "
                    + "a restarted daemon carries the download on (afproxyctl show \(self.id))")
            throw ExitCode(1)
        }
    }

    private func finish(_ task: TaskRecord, _ body: [UInt8]) throws {
        if self.json { Console.output(String(decoding: body, as: UTF8.self)) }
        if let error = task.error {
            Console.error(Self.failure(task, error: error))
            throw ExitCode(1)
        }
        if !self.json { Console.output(task.file?.path ?? task.url) }
    }

    /// `afproxyctl: download 12 failed: <error> (<errorCode>)`.
    static func failure(_ task: TaskRecord, error: String) -> String {
        "afproxyctl: download \(task.id) failed: \(error)" + (task.errorCode.map { " (\($0))" } ?? "")
    }

    /// Ctrl-C stops the waiting, not the download: the daemon owns it.
    private func interrupted(drawn: Bool) -> ExitCode {
        if drawn { Console.errorText("\n") }
        Console.error("afproxyctl: download \(self.id) keeps running in the daemon (afproxyctl show \(self.id))")
        return ExitCode(130)
    }

    /// Sleeps `seconds`; false when Ctrl-C came first.
    private static func sleep(_ seconds: Double) -> Bool {
        let end = Self.monotonicSeconds() + seconds
        while !Interrupt.received.load(ordering: .relaxed) {
            let left = end - Self.monotonicSeconds()
            if left <= 0 { return true }
            usleep(UInt32(left * 1_000_000))  // a signal ends it early
        }
        return false
    }

    private static func monotonicSeconds() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }

    /// Read at every redraw, so that a resized terminal gets a line that fits.
    private static func terminalWidth() -> Int {
        var size = winsize()
        if ioctl(2, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 { return Int(size.ws_col) }
        return 80
    }
}

/// SIGINT as a flag instead of the end of the process, so that `--wait` can say the download
/// goes on. No SA_RESTART: a request blocked on a daemon that does not answer is interrupted too.
enum Interrupt {
    static let received = Atomic<Bool>(false)

    static func catchIt() {
        // Initialized here, not for the first time inside the handler.
        _ = Self.received.load(ordering: .relaxed)
        var action = sigaction()
        action.__sigaction_handler.sa_handler = { _ in Interrupt.received.store(true, ordering: .relaxed) }
        sigemptyset(&action.sa_mask)
        action.sa_flags = 0
        sigaction(SIGINT, &action, nil)
    }
}
