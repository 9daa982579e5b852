import AFProxyControl
import AFProxyListener
import AFProxyMetrics
import AFProxyWeb

/// The daemon's four servers, each a service of its one group: `DaemonService` binds them at
/// its start, and `Daemon.stopSequence` orders their stops.
struct DaemonServers: Sendable {
    let listener: ProxyListener
    let control: ControlServer
    let web: WebServer
    let metrics: MetricsServer
}
