#if canImport(Glibc)
import Glibc
#endif

/// Whether this kernel lets afproxyctl make the user namespace a capture needs, and if not,
/// which setting says no: Debian's `kernel.unprivileged_userns_clone`, the per-namespace limit
/// `user.max_user_namespaces`, or Ubuntu's AppArmor restriction.
enum UserNamespaceCheck {
    /// A sentence naming the setting that refuses, nil when none does. `read` answers a file's
    /// first line (nil: not there), for tests.
    static func refusal(uid: uid_t = getuid(), read: (String) -> String? = Self.firstLine) -> String? {
        if read("/proc/sys/user/max_user_namespaces") == "0" {
            return "user namespaces are off here (user.max_user_namespaces=0); "
                + "allow some with: sysctl -w user.max_user_namespaces=10000"
        }
        guard uid != 0 else { return nil }
        if read("/proc/sys/kernel/unprivileged_userns_clone") == "0" {
            return "unprivileged user namespaces are off (kernel.unprivileged_userns_clone=0); "
                + "allow them with: sysctl -w kernel.unprivileged_userns_clone=1"
        }
        if read("/proc/sys/kernel/apparmor_restrict_unprivileged_userns") == "1" {
            return "AppArmor restricts unprivileged user namespaces "
                + "(kernel.apparmor_restrict_unprivileged_userns=1); allow them with: "
                + "sysctl -w kernel.apparmor_restrict_unprivileged_userns=0, or an AppArmor profile "
                + "for afproxyctl with the userns rule"
        }
        return nil
    }

    static func firstLine(_ path: String) -> String? {
        guard let file = fopen(path, "r") else { return nil }
        defer { fclose(file) }
        var buffer = [CChar](repeating: 0, count: 64)
        guard fgets(&buffer, Int32(buffer.count), file) != nil else { return nil }
        let line = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return line.trimmingSuffix("\n")
    }
}

extension String {
    fileprivate func trimmingSuffix(_ suffix: String) -> String {
        self.hasSuffix(suffix) ? String(self.dropLast(suffix.count)) : self
    }
}
