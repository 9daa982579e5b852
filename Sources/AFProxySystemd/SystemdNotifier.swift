import CSystemd

#if canImport(Glibc)
import Glibc
#endif

/// The service manager's notify protocol (`sd_notify`): READY, STATUS, RELOADING, STOPPING and
/// WATCHDOG. Without `NOTIFY_SOCKET` (not run by systemd as Type=notify) every call is a no-op,
/// so the daemon calls it unconditionally.
public struct SystemdNotifier: Sendable {
    /// True when `NOTIFY_SOCKET` names a socket to send to.
    public let isEnabled: Bool

    public init(environment: [String: String]) {
        self.isEnabled = !(environment["NOTIFY_SOCKET"] ?? "").isEmpty
    }

    /// Startup or reload finished: every socket accepts connections.
    public func ready(status: String? = nil) {
        self.send(NotifyMessage.ready(status: status))
    }

    public func status(_ text: String) {
        self.send(NotifyMessage.status(text))
    }

    /// A reload starts now; systemd waits for the next `ready`.
    public func reloading(status: String? = nil) {
        self.send(NotifyMessage.reloading(monotonicMicroseconds: Self.monotonicMicroseconds(), status: status))
    }

    public func stopping(status: String? = nil) {
        self.send(NotifyMessage.stopping(status: status))
    }

    public func watchdog() {
        self.send(NotifyMessage.watchdog)
    }

    /// Sends `message` as is; answers false if it could not be delivered.
    @discardableResult
    public func send(_ message: String) -> Bool {
        guard self.isEnabled else { return false }
        return sd_notify(0, message) > 0
    }

    /// CLOCK_MONOTONIC in microseconds: the clock systemd compares MONOTONIC_USEC= with.
    public static func monotonicMicroseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1000
    }
}

/// The text of notify messages: newline-separated `KEY=value` assignments.
public enum NotifyMessage {
    public static func ready(status: String?) -> String {
        Self.join(["READY=1"], status: status)
    }

    public static func status(_ text: String) -> String {
        Self.join([], status: text)
    }

    public static func reloading(monotonicMicroseconds: UInt64, status: String?) -> String {
        Self.join(["RELOADING=1", "MONOTONIC_USEC=\(monotonicMicroseconds)"], status: status)
    }

    public static func stopping(status: String?) -> String {
        Self.join(["STOPPING=1"], status: status)
    }

    public static let watchdog = "WATCHDOG=1"

    /// A value may not span lines: each line is an assignment of its own.
    public static func singleLine(_ text: String) -> String {
        String(text.map { $0.isNewline ? " " : $0 })
    }

    private static func join(_ assignments: [String], status: String?) -> String {
        var lines = assignments
        if let status { lines.append("STATUS=\(Self.singleLine(status))") }
        return lines.joined(separator: "\n")
    }
}
