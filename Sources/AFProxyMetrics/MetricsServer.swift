import AFProxyModel
import AFProxyServerKit
import NIOCore
import NIOHTTP1
import NIOPosix
import ServiceLifecycle

/// The `metrics-listen` port: plain HTTP/1.1 for Prometheus to scrape, off unless configured.
/// It has no access control of its own: whoever can reach the address reads the metrics (task
/// counts and rates, never URLs or hosts), which is why docs/metrics.md advises loopback. As a
/// `Service` it serves until graceful shutdown, then closes its port.
package final class MetricsServer: Service, Sendable {
    /// A scraper that keeps a connection open but sends nothing this long is dropped.
    static let idleTimeout = TimeAmount.seconds(120)

    /// A bind that failed, saying which key's address it was.
    package struct Failure: Error, CustomStringConvertible {
        package var description: String
    }

    private let group: any EventLoopGroup
    private let exposition: @Sendable () -> [UInt8]
    private let sockets = ServerSockets()

    package init(group: any EventLoopGroup, exposition: @escaping @Sendable () -> [UInt8]) {
        self.group = group
        self.exposition = exposition
    }

    /// Binds `host:port`; answers the bound address (port 0 picks one).
    package func bind(host: String, port: Int) async throws -> SocketAddress? {
        let exposition = self.exposition
        let bootstrap = ServerBootstrap(group: self.group)
            .serverChannelOption(.backlog, value: 64)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let sync = channel.pipeline.syncOperations
                    try sync.addHandler(IdleStateHandler(readTimeout: Self.idleTimeout))
                    try sync.configureHTTPServerPipeline(withErrorHandling: true)
                    try sync.addHandler(MetricsHTTPHandler(exposition: exposition))
                }
            }
        let channel: any Channel
        do {
            channel = try await self.sockets.bind(bootstrap, host: host, port: port)
        } catch {
            throw Failure(description: "metrics-listen: cannot listen on \(host):\(port): \(error)")
        }
        return channel.localAddress
    }

    package func run() async throws {
        await self.sockets.serve()
    }
}
