/// Where the control socket lives, resolved the same way by the daemon and by afproxyctl:
/// the flag; else `$AFPROXY_CONTROL_SOCKET`; else `$RUNTIME_DIRECTORY/control.sock` (systemd's
/// RuntimeDirectory=); else `$XDG_RUNTIME_DIR/afproxy/control.sock`; else `/tmp/afproxy-$UID/control.sock`.
package enum ControlSocketPath {
    package static func resolve(flag: String?, environment: [String: String], uid: UInt32) -> String {
        if let flag, !flag.isEmpty { return flag }
        if let path = environment["AFPROXY_CONTROL_SOCKET"], !path.isEmpty { return path }
        if let directory = environment["RUNTIME_DIRECTORY"], !directory.isEmpty {
            // systemd may list several directories separated by colons; ours is the first.
            let first = directory.split(separator: ":").first.map(String.init) ?? directory
            return "\(first)/control.sock"
        }
        if let directory = environment["XDG_RUNTIME_DIR"], !directory.isEmpty {
            return "\(directory)/afproxy/control.sock"
        }
        return "/tmp/afproxy-\(uid)/control.sock"
    }

    /// The system service's socket (systemd's RuntimeDirectory=afproxy, afproxy-control.socket).
    package static let systemService = "/run/afproxy/control.sock"

    /// afproxyctl's lookup: `resolve`, except that when no flag or variable named a path and
    /// nothing is at the per-user default, the system service's socket is used if it is there,
    /// so `sudo afproxyctl list` finds the installed service without `--socket`.
    package static func resolveForClient(
        flag: String?, environment: [String: String], uid: UInt32, exists: (String) -> Bool
    ) -> String {
        let path = Self.resolve(flag: flag, environment: environment, uid: uid)
        let named =
            (flag.map { !$0.isEmpty } ?? false)
            || !(environment["AFPROXY_CONTROL_SOCKET"] ?? "").isEmpty
            || !(environment["RUNTIME_DIRECTORY"] ?? "").isEmpty
        if named || exists(path) || !exists(Self.systemService) { return path }
        return Self.systemService
    }
}
