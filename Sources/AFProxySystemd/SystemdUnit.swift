import CSystemd

#if canImport(Glibc)
import Glibc
#endif

/// The systemd unit a process runs in, from its control group (`sd_pid_get_unit`): how the
/// client-process lookup names the service or scope a request came from. Exposed as a plain
/// function so that the modules that use it need not link libsystemd's module themselves.
package enum SystemdUnit {
    /// `foo.service`, `session-2.scope`, `user@1000.service`; nil when the process is gone, not
    /// visible, or in no unit (no systemd).
    package static func of(pid: Int32) -> String? {
        var unit: UnsafeMutablePointer<CChar>?
        guard sd_pid_get_unit(pid_t(pid), &unit) >= 0, let unit else { return nil }
        defer { free(unit) }
        return String(cString: unit)
    }
}
