import AFProxyTLS
import Logging

#if canImport(Glibc)
import Glibc
#endif

extension Daemon {
    /// The local CA (`ca-dir`, default STATE/ca). Loaded now when its key is there, so a key that
    /// cannot be used is reported at start; made only on first use otherwise (`afproxyctl ca`, or
    /// interception), so a daemon that never intercepts writes no key. A CA that fails to load
    /// does not stop the daemon: tunnels and plain HTTP need none, and `afproxyctl ca` answers why.
    static func interceptAuthority(
        _ configuration: DaemonConfiguration, _ environment: [String: String], logger: Logger
    ) -> InterceptAuthority {
        let directory =
            configuration.caDirectory
            ?? (configuration.stateDirectory ?? DownloadLocations.stateDirectory(environment)) + "/ca"
        let authority = InterceptAuthority(directory: directory, logger: logger)
        guard access(directory + "/ca-key.pem", F_OK) == 0 || access(directory + "/ca-cert.pem", F_OK) == 0 else {
            return authority
        }
        do {
            try authority.prepare()
        } catch {
            logger.error("the local CA cannot be used, HTTPS interception is off: \(error)")
        }
        return authority
    }
}
