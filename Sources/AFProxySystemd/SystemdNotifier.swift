import CSystemd

#if canImport(Glibc)
import Glibc
#endif

/// The service manager's notify protocol (`sd_notify`): READY, STATUS, RELOADING, STOPPING and
/// WATCHDOG. Without `NOTIFY_SOCKET` (not run by systemd as Type=notify) every call is a no-op,
/// so the daemon calls it unconditionally.
package struct SystemdNotifier: Sendable {
    /// True when `NOTIFY_SOCKET` names a socket to send to.
    package let isEnabled: Bool

    package init(environment: [String: String]) {
        self.isEnabled = !(environment["NOTIFY_SOCKET"] ?? "").isEmpty
    }

    /// Startup or reload finished: every socket accepts connections.
    package func ready(status: String? = nil) {
        self.send(NotifyMessage.ready(status: status))
    }

    package func status(_ text: String) {
        self.send(NotifyMessage.status(text))
    }

    /// A reload starts now; systemd waits for the next `ready`.
    package func reloading(status: String? = nil) {
        self.send(NotifyMessage.reloading(monotonicMicroseconds: Self.monotonicMicroseconds(), status: status))
    }

    package func stopping(status: String? = nil) {
        self.send(NotifyMessage.stopping(status: status))
    }

    package func watchdog() {
        self.send(NotifyMessage.watchdog)
    }

    /// Sends `message` as is; answers false if it could not be delivered.
    @discardableResult
    package func send(_ message: String) -> Bool {
        guard self.isEnabled else { return false }
        return sd_notify(0, message) > 0
    }

    /// CLOCK_MONOTONIC in microseconds: the clock systemd compares MONOTONIC_USEC= with.
    package static func monotonicMicroseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1000
    }
}

/// The text of notify messages: newline-separated `KEY=value` assignments.
package enum NotifyMessage {
    package static func ready(status: String?) -> String {
        Self.join(["READY=1"], status: status)
    }

    package static func status(_ text: String) -> String {
        Self.join([], status: text)
    }

    package static func reloading(monotonicMicroseconds: UInt64, status: String?) -> String {
        Self.join(["RELOADING=1", "MONOTONIC_USEC=\(monotonicMicroseconds)"], status: status)
    }

    package static func stopping(status: String?) -> String {
        Self.join(["STOPPING=1"], status: status)
    }

    package static let watchdog = "WATCHDOG=1"

    /// A value may not span lines: each line is an assignment of its own.
    package static func singleLine(_ text: String) -> String {
        String(text.map { $0.isNewline ? " " : $0 })
    }

    private static func join(_ assignments: [String], status: String?) -> String {
        var lines = assignments
        if let status { lines.append("STATUS=\(Self.singleLine(status))") }
        return lines.joined(separator: "\n")
    }
}
