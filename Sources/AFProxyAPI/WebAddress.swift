/// `GET /v1/web` on the control socket: where the web dashboard listens and its token, for
/// `afproxyctl web`. The control socket is already limited to the daemon's user and group, so it
/// may hand out the token; the web port itself never answers this without the token.
package struct WebAddress: Sendable, Codable, Equatable {
    /// `http://HOST:PORT/`, without the token.
    package var url: String
    package var token: String
    /// The file holding the token (mode 0600), for scripts.
    package var tokenFile: String?

    package init(url: String, token: String, tokenFile: String?) {
        self.url = url
        self.token = token
        self.tokenFile = tokenFile
    }

    /// The address to open: it sets the page's cookie and drops the token from the address bar.
    package var openURL: String { "\(self.url)?token=\(self.token)" }
}
