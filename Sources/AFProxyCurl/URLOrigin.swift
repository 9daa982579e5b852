import FoundationEssentials

/// A URL's scheme, host and port (the port its scheme implies when none is written): two URLs
/// of one origin may share credentials, as curl lets a followed redirect keep them only to the
/// host, port and scheme it started with.
struct URLOrigin: Equatable {
    let scheme: String
    let host: String
    let port: Int

    init?(_ url: String) {
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased(),
            let host = components.host?.lowercased()
        else { return nil }
        guard let port = components.port ?? (scheme == "https" ? 443 : scheme == "http" ? 80 : nil) else { return nil }
        self.scheme = scheme
        self.host = host
        self.port = port
    }
}
