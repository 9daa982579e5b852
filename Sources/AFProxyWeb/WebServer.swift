import AFProxyAPI
import AFProxyControl
import AFProxyModel
import AFProxyServerKit
import NIOCore
import NIOPosix
import ServiceLifecycle

#if canImport(Glibc)
import Glibc
#endif

/// The `web-listen` port: the dashboard's page and the control API behind `WebAccess`, off
/// unless configured. The API is the control socket's own (`ControlServer.configureWebConnection`
/// builds the same pipeline), so the page can do exactly what afproxyctl can, and nothing more.
/// A new token is made at every start and kept, mode 0600, in `tokenFile` until the daemon stops.
/// As a `Service` it serves until graceful shutdown, then closes its port and removes the token.
package final class WebServer: Service, Sendable {
    package struct Failure: Error, CustomStringConvertible {
        package var description: String
    }

    private let control: ControlServer
    private let group: any EventLoopGroup
    private let access = Locked<WebAccess?>(nil)
    private let sockets = ServerSockets()
    private let tokenFile = Locked<String?>(nil)

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
            channel = try await self.sockets.bind(bootstrap, host: host, port: port)
        } catch {
            throw Failure(
                description: "web-listen: cannot listen on \(EndpointText.of(host: host, port: port)): \(error)")
        }
        let rules = WebAccess(token: WebToken.random(), host: host, port: channel.localAddress?.port ?? port)
        do {
            try WebTokenFile.write(rules.token, to: tokenFile)
        } catch {
            await self.sockets.quiesce()
            throw error
        }
        access.withLock { $0 = rules }
        self.tokenFile.withLock { $0 = tokenFile }
        return WebAddress(url: rules.url, token: rules.token, tokenFile: tokenFile)
    }

    package func run() async throws {
        await self.sockets.serve {
            let tokenFile = self.tokenFile.withLock { file in
                defer { file = nil }
                return file
            }
            if let tokenFile { unlink(tokenFile) }
        }
    }
}
