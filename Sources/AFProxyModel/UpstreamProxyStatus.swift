/// The upstream proxy as `GET /v1/status` and `afproxyctl status` show it: where it is, never
/// its credentials, and whether the last connection to it failed and why.
package struct UpstreamProxyStatus: Sendable, Codable, Equatable {
    /// `scheme://HOST:PORT`.
    package var proxy: String
    package var reachable: Bool
    /// Why the last connection to it failed; nil while it is reachable.
    package var error: String?

    package init(proxy: String, reachable: Bool, error: String? = nil) {
        self.proxy = proxy
        self.reachable = reachable
        self.error = error
    }
}
