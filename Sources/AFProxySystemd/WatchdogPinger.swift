import CSystemd

/// Sends WATCHDOG=1 every half of `WATCHDOG_USEC`, but only while the session thread makes
/// progress: its loop counter must have moved recently. A transfer loop stuck in a callback stops
/// the pings, and systemd restarts the daemon (`WatchdogSec=`, `Restart=on-failure`).
package struct WatchdogPinger: Sendable {
    package let interval: Duration
    private let notifier: SystemdNotifier
    private let progress: @Sendable () -> UInt64

    /// Nil unless the service manager asked for pings (`WATCHDOG_USEC`, and `WATCHDOG_PID` if
    /// set is ours). `progress` is a counter that moves while the watched thread is alive.
    package init?(notifier: SystemdNotifier, progress: @escaping @Sendable () -> UInt64) {
        var microseconds: UInt64 = 0
        guard notifier.isEnabled, sd_watchdog_enabled(0, &microseconds) > 0, microseconds > 0 else { return nil }
        self.interval = .microseconds(Int64(clamping: microseconds))
        self.notifier = notifier
        self.progress = progress
    }

    /// Pings until the task is canceled.
    package func run() async {
        let clock = ContinuousClock()
        var policy = WatchdogPolicy(interval: self.interval)
        while !Task.isCancelled {
            if policy.observe(progress: self.progress(), at: clock.now) {
                self.notifier.watchdog()
            }
            try? await Task.sleep(for: policy.samplingPeriod)
        }
    }
}

/// When to ping, with no clock or I/O of its own: fed the progress counter at each sample, it
/// answers whether to send WATCHDOG=1 now.
///
/// The session loop wakes at least once a second even when idle, so a counter that has not moved
/// for `stallTolerance` (two seconds, or the half interval if longer) means the thread is stuck.
package struct WatchdogPolicy: Sendable {
    package let interval: Duration
    package let stallTolerance: Duration
    private var lastProgress: UInt64?
    private var lastChange: ContinuousClock.Instant?
    private var lastPing: ContinuousClock.Instant?

    package init(interval: Duration, stallTolerance: Duration = .seconds(2)) {
        self.interval = interval
        self.stallTolerance = max(stallTolerance, interval / 2)
    }

    /// How often to sample: often enough to see a once-a-second counter move, and to ping on time.
    package var samplingPeriod: Duration {
        min(self.interval / 4, .milliseconds(250))
    }

    package mutating func observe(progress: UInt64, at now: ContinuousClock.Instant) -> Bool {
        if progress != self.lastProgress {
            self.lastProgress = progress
            self.lastChange = now
        }
        guard let lastChange = self.lastChange, now - lastChange <= self.stallTolerance else { return false }
        if let lastPing = self.lastPing, now - lastPing < self.interval / 2 { return false }
        self.lastPing = now
        return true
    }
}
