import AFProxyControl
import AFProxyListener
import AFProxyMetrics
import AFProxyWeb

/// The daemon's servers: four services of its one group, which `DaemonService` binds at its
/// start and `Daemon.stopSequence` orders the stops of, and the capture socket, which
/// `DaemonService` binds beside the control socket and closes as the stop begins.
struct DaemonServers: Sendable {
    let listener: ProxyListener
    let control: ControlServer
    let web: WebServer
    let metrics: MetricsServer
    let captures: CaptureReceiver
}
