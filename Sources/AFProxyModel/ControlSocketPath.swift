/// Where the control socket lives, resolved the same way by the daemon and by afproxyctl:
/// the flag; else `$AFPROXY_CONTROL_SOCKET`; else `$RUNTIME_DIRECTORY/control.sock` (systemd's
/// RuntimeDirectory=); else `$XDG_RUNTIME_DIR/afproxy/control.sock`; else `/tmp/afproxy-$UID/control.sock`.
public enum ControlSocketPath {
    public static func resolve(flag: String?, environment: [String: String], uid: UInt32) -> String {
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
}
