import AFProxyModel
import AFProxyRules
import AFProxyStore
import Logging

/// The access-control checks of the configuration that look beyond its text: the listen
/// addresses against `allow-clients`, and `proxy-auth-file`'s contents.
enum AccessFiles {
    /// Nil without `proxy-auth-file`; its users otherwise, a warning logged when the file is
    /// readable by others.
    static func proxyUsers(
        _ configuration: DaemonConfiguration, logger: Logger?
    ) throws(ConfigurationError) -> ProxyUsers? {
        guard let path = configuration.proxyAuthFile else { return nil }
        do throws(ProxyAuthFileError) {
            let loaded = try ProxyAuthFile.load(path: path)
            if let warning = loaded.warning { logger?.warning("\(warning)") }
            logger?.info("proxy authentication on", metadata: ["users": "\(loaded.users.hashes.count)"])
            return loaded.users
        } catch {
            throw ConfigurationError(error.message)
        }
    }
}

extension Daemon {
    /// A `listen` or `socks-listen` address that is not loopback while `allow-clients` is not
    /// set refuses the start: the person asked for a network to reach the proxy, and must say
    /// which clients may (sockets systemd hands over are taken as they are; the loopback default
    /// still guards them).
    static func checkExposure(_ configuration: DaemonConfiguration) throws(ConfigurationError) {
        for text in configuration.listen + (configuration.socksListen.map { [$0] } ?? []) {
            let address = try ListenAddress.parse(text)
            if let refusal = AllowedClients.exposureRefusal(
                listenHost: address.host, allowClientsSet: configuration.allowClients != nil)
            {
                throw ConfigurationError(refusal)
            }
        }
    }
}
