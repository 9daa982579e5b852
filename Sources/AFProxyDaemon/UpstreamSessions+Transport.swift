import AFProxyCurl
import AFProxyManager
import AFProxyModel
import AFProxyRules
import AFProxyTunnel
import NIOCore

/// The daemon's transport: HTTP on the curl sessions (`UpstreamSessions.makeTransfer`, the
/// session paired with the client's loop), CONNECT tunnels on the NIO relay with the sessions'
/// timeouts, intercepted connections, and the pin probe on curl outside the sessions. Declared here, the one module that sees the manager and
/// both transports, so that neither transport knows the manager nor the manager curl.
extension UpstreamSessions: UpstreamTransport {
    package func openTunnel(
        host: String, port: Int, eventLoop: any EventLoop, destinations: DestinationPolicy,
        delegate: any TunnelTransferDelegate, throttle: ThrottleTicket?, upgrade: TunnelUpgrade?
    ) -> any TunnelTransport {
        TunnelTransfer(
            host: host, port: port, eventLoop: eventLoop, connectTimeout: self.configuration.connectTimeout,
            idleTimeout: self.configuration.tunnelIdleTimeout, destinations: destinations, delegate: delegate,
            throttle: throttle, upgrade: upgrade, liveUpstreamProxy: self.liveUpstreamProxy,
            splice: self.configuration.tunnelSplice)
    }

    package func openInterceptedConnection(
        eventLoop: any EventLoop, delegate: any TunnelTransferDelegate
    ) -> any TunnelTransport {
        InterceptedConnection(eventLoop: eventLoop, delegate: delegate)
    }

    package func probePin(host: String, port: Int, caFile: String?) -> Result<String, TaskFailure> {
        PinProbe.pin(
            host: host, port: port, caFile: caFile, connectTimeout: self.configuration.connectTimeout,
            proxy: self.liveUpstreamProxy.proxy(forHost: host))
    }
}

extension TunnelTransfer: TunnelTransport {}
extension InterceptedConnection: TunnelTransport {}
