import AFProxyControl
import AFProxyModel
import NIOCore
import NIOPosix

#if canImport(Glibc)
import Glibc
#endif

/// The `web-listen` port: the dashboard's page and the control API behind `WebAccess`, off
/// unless configured. The API is the control socket's own (`ControlServer.configureWebConnection`
/// builds the same pipeline), so the page can do exactly what afproxyctl can, and nothing more.
/// A new token is made at every start and kept, mode 0600, in `tokenFile` until the daemon stops.
package final class WebServer: Sendable {
    package struct Failure: Error, CustomStringConvertible {
        package var description: String
    }

    private let control: ControlServer
    private let group: any EventLoopGroup
    private let access = Locked<WebAccess?>(nil)
    private let state = Locked<(channel: (any Channel)?, tokenFile: String?)>((nil, nil))

    package init(control: ControlServer, group: any EventLoopGroup) {
        self.control = control
        self.group = group
    }

    /// Binds `host:port` (port 0 picks one), writes the token to `tokenFile`, and answers what
    /// `afproxyctl web` prints.
    package func bind(host: String, port: Int, tokenFile: String) async throws -> WebAddress {
        let control = self.control
        let access = self.access
        let bootstrap = ServerBootstrap(group: self.group)
            .serverChannelOption(.backlog, value: 64)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                control.configureWebConnection(
                    channel,
                    gate: [
                        WebHeadersHandler(),
                        WebGateHandler(
                            access: { access.withLock { $0 } },
                            snapshot: { control.liveSnapshotJSON(limit: WebPage.firstTasks) }),
                    ])
            }
        let channel: any Channel
        do {
            channel = try await bootstrap.bind(host: host, port: port).get()
        } catch {
            throw Failure(
                description: "web-listen: cannot listen on \(EndpointText.of(host: host, port: port)): \(error)")
        }
        let rules = WebAccess(token: WebToken.random(), host: host, port: channel.localAddress?.port ?? port)
        do {
            try WebTokenFile.write(rules.token, to: tokenFile)
        } catch {
            try? await channel.close()
            throw error
        }
        access.withLock { $0 = rules }
        self.state.withLock { $0 = (channel, tokenFile) }
        return WebAddress(url: rules.url, token: rules.token, tokenFile: tokenFile)
    }

    package func stop() async {
        let (channel, tokenFile) = self.state.withLock { state in
            defer { state = (nil, nil) }
            return state
        }
        try? await channel?.close()
        if let tokenFile { unlink(tokenFile) }
    }
}
