import AFProxyAPI
import AFProxyManager
import AFProxyModel

extension ControlRouter {
    /// Every endpoint of the control API, where it lives. docs/control-api.md lists them.
    static func api(
        manager: SessionManager, extraStats: @escaping @Sendable (inout SessionStats) -> Void,
        metrics: ControlServer.Metrics?, web: @escaping @Sendable () -> WebAddress?, streams: ControlStreams?,
        authority: (any LocalAuthority)? = nil, listen: @escaping @Sendable () -> [String] = { [] },
        captures: @escaping @Sendable () -> [CaptureSummary] = { [] }
    ) -> ControlRouter {
        var router = ControlRouter()
        router.add("tasks", TasksEndpoint(manager: manager))
        router.add("downloads", DownloadsEndpoint(manager: manager))
        router.add("rules", RulesEndpoint(kinds: manager.rules.editable))
        router.add("holds", HoldsEndpoint(manager: manager))
        router.add("throttle", ThrottleEndpoint(manager: manager))
        router.add("pin", PinEndpoint(manager: manager))
        router.add("intercept", InterceptEndpoint(manager: manager, authority: authority))
        router.add("ca", CAEndpoint(authority: authority))
        router.add("har", HAREndpoint(manager: manager))
        router.add("stats", StatsEndpoint(manager: manager, extraStats: extraStats))
        router.add(
            "status", StatusEndpoint(manager: manager, extraStats: extraStats, listen: listen, captures: captures))
        router.add("web", WebEndpoint(web: web))
        router.add("events", EventsEndpoint(manager: manager, streams: streams))
        router.add("live", LiveEndpoint(manager: manager, extraStats: extraStats, streams: streams))
        router.add(path: "/metrics", MetricsEndpoint(metrics: metrics))
        return router
    }
}
