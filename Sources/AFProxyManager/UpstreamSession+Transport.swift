import AFProxyCurl
import AFProxyModel
import AFProxyRules
import AFProxyTunnel
import NIOCore

/// The daemon's transport: HTTP on the curl session (its six commands are the protocol's), CONNECT
/// tunnels on the NIO relay with the session's timeouts, and the pin probe on curl outside the
/// session. Declared here so that the transports know nothing of the manager.
extension UpstreamSession: UpstreamTransport {
    package func openTunnel(
        host: String, port: Int, eventLoop: any EventLoop, destinations: DestinationPolicy,
        delegate: any TunnelTransferDelegate, throttle: ThrottleTicket?, upgrade: TunnelUpgrade?
    ) -> any TunnelTransport {
        TunnelTransfer(
            host: host, port: port, eventLoop: eventLoop, connectTimeout: self.configuration.connectTimeout,
            idleTimeout: self.configuration.tunnelIdleTimeout, destinations: destinations, delegate: delegate,
            throttle: throttle, upgrade: upgrade, parentProxy: self.parentProxy,
            splice: self.configuration.tunnelSplice)
    }

    package func probePin(host: String, port: Int, caFile: String?) -> Result<String, TaskFailure> {
        PinProbe.pin(
            host: host, port: port, caFile: caFile, connectTimeout: self.configuration.connectTimeout,
            proxy: self.parentProxy.proxy(forHost: host))
    }
}

extension TunnelTransfer: TunnelTransport {}
extension InterceptedConnection: TunnelTransport {}
