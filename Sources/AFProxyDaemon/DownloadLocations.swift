/// Where the daemon keeps what must survive a restart and where downloads go when no path is
/// given, by the XDG base directories, or systemd's `StateDirectory=` under the system service.
enum DownloadLocations {
    /// `$STATE_DIRECTORY` (its first entry) under systemd, else `$XDG_STATE_HOME/afproxy`, else
    /// `~/.local/state/afproxy`.
    static func stateDirectory(_ environment: [String: String]) -> String {
        if let systemd = Self.systemdStateDirectory(environment) { return systemd }
        if let xdg = environment["XDG_STATE_HOME"], xdg.hasPrefix("/") { return xdg + "/afproxy" }
        return Self.home(environment) + "/.local/state/afproxy"
    }

    /// `$STATE_DIRECTORY/downloads` under systemd, else `$XDG_DOWNLOAD_DIR`, else `~/Downloads`.
    static func downloadDirectory(_ environment: [String: String]) -> String {
        if let systemd = Self.systemdStateDirectory(environment) { return systemd + "/downloads" }
        if let xdg = environment["XDG_DOWNLOAD_DIR"], xdg.hasPrefix("/") { return xdg }
        return Self.home(environment) + "/Downloads"
    }

    /// Said when a directory is refused: under the system service the daemon may write only there.
    static func writableHint(_ environment: [String: String]) -> String? {
        Self.systemdStateDirectory(environment).map { "under the system service only \($0) is writable" }
    }

    private static func systemdStateDirectory(_ environment: [String: String]) -> String? {
        guard let value = environment["STATE_DIRECTORY"], let first = value.split(separator: ":").first,
            first.hasPrefix("/")
        else { return nil }
        return String(first)
    }

    private static func home(_ environment: [String: String]) -> String {
        environment["HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? "/root"
    }
}
