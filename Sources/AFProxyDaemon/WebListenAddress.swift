import AFProxyModel

/// `web-listen`'s address. The dashboard checks each request's `Host` against it (against DNS
/// rebinding), so it must be an address people type: a wildcard (`0.0.0.0`, `::`) names no
/// host a browser would send, and is refused with a way out. Any address but loopback is allowed
/// because a person wrote it, and is logged as a warning at start.
enum WebListenAddress {
    static func check(_ text: String) throws(ConfigurationError) -> String {
        let address = try ListenAddress.parse(text)
        if ["0.0.0.0", "::", "*", "[::]"].contains(address.host) {
            throw ConfigurationError(
                "web-listen needs the address the browser will use (its Host is checked), not the wildcard "
                    + "\(address.host): name one address, such as 127.0.0.1:\(address.port) or a host name")
        }
        return text
    }
}
