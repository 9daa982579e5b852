import AFProxyManager
import AFProxyModel
import AFProxyServerKit
import NIOCore
import NIOPosix

/// The sockets of one capture (`afproxyctl run`), open in its namespace and served here until
/// the capture ends.
package struct CaptureChannels: Sendable {
    let channels: [any Channel]

    /// Stops accepting and answering; connections already accepted go on to their end.
    package func close() {
        for channel in self.channels { channel.close(promise: nil) }
    }
}

extension ProxyListener {
    /// Serves a capture on the sockets `afproxyctl run` opened inside its network namespace:
    /// `tcp`, listening, where every connection of the captured program arrives redirected, and
    /// `udp`, where its DNS queries do (`CaptureResolver`). A connection's original destination
    /// (`OriginalDestination`), named as the program asked for it, goes the one path of a known
    /// destination (`ArrivalSniffer`) with the capture's process on every task. DNS over TCP
    /// (port 53) is refused: it would reach the machine's resolver unanswered by afproxy.
    package func adoptCapture(_ capture: CaptureSource, tcp: [CInt], udp: [CInt]) -> EventLoopFuture<CaptureChannels> {
        let manager = self.manager
        let resolver = DatagramBootstrap(group: self.group).channelInitializer { channel in
            channel.eventLoop.makeCompletedFuture {
                try channel.pipeline.syncOperations.addHandler(CaptureResolver(manager: manager, names: capture.names))
            }
        }
        let opened =
            tcp.map { self.captureBootstrap(capture).withBoundSocket($0) } + udp.map { resolver.withBoundSocket($0) }
        let eventLoop = self.group.any()
        return EventLoopFuture.whenAllComplete(opened, on: eventLoop).flatMapThrowing { results in
            let channels = results.compactMap { try? $0.get() }
            guard channels.count == results.count else {
                for channel in channels { channel.close(promise: nil) }
                for case .failure(let error) in results { throw error }
                throw ChannelError.ioOnClosedChannel
            }
            return CaptureChannels(channels: channels)
        }
    }

    private func captureBootstrap(_ capture: CaptureSource) -> ServerBootstrap {
        self.serverBootstrap { [self] channel in
            let configuration = self.configuration.withLock { $0 }
            guard self.admission.admit(channel) else { return channel.close() }
            let process = ClientProcessSlot(settled: capture.process)
            let client = channel.remoteAddress.map(\.endpointText) ?? "unknown"
            return OriginalDestination.of(channel).flatMap { destination in
                guard destination.port != 53 else { return channel.close() }
                let host = capture.names.name(of: destination.address) ?? destination.address.description
                let intercept = self.interception.map {
                    InterceptSetup(
                        interception: $0, configuration: configuration, limits: Self.decoderLimits(configuration),
                        clientAddress: client, clientProcess: process, manager: self.manager,
                        http2Connections: self.http2Connections)
                }
                let arrival = ArrivalSniffer.Arrival(
                    host: host, port: destination.port, client: client, process: process, followsHost: true,
                    interceptAll: capture.interceptAll)
                return channel.eventLoop.makeCompletedFuture {
                    try ArrivalSniffer.install(
                        on: channel, arrival: arrival, manager: self.manager, configuration: configuration,
                        intercept: intercept)
                }
            }
        }
    }
}
