import AFProxyModel
import FoundationEssentials
import Testing

@testable import AFProxyDaemon

/// `network-loss` from every source, the STATUS= line while the network is gone, and the log
/// lines of the watcher's reports.
@Suite struct NetworkWiringTests {
    @Test func networkLossFromFileEnvironmentAndFlag() throws {
        #expect(DaemonConfiguration().networkLoss == .waitDownloads)
        var configuration = DaemonConfiguration()
        try ConfigurationFile.apply("network-loss = ignore\n", path: "t.conf", to: &configuration)
        #expect(configuration.networkLoss == .ignore)
        try ConfigurationFile.applyEnvironment(["AFPROXY_NETWORK_LOSS": "suspend-all"], to: &configuration)
        #expect(configuration.networkLoss == .suspendAll)
        let command = try AFProxyCommand.parse(["--network-loss", "wait-downloads"])
        #expect(try command.resolve(environment: ["AFPROXY_NETWORK_LOSS": "ignore"]).networkLoss == .waitDownloads)
        #expect(throws: ConfigurationError.self) {
            try ConfigurationFile.apply("network-loss = panic\n", path: "t.conf", to: &configuration)
        }
    }

    @Test func networkLossTakesEffectAtAReload() {
        var new = DaemonConfiguration()
        new.networkLoss = .suspendAll
        #expect(DaemonService.restartOnlyChanges(from: DaemonConfiguration(), to: new, adoptedProxy: false) == [])
    }

    @Test func theStatusLineSaysNetworkUnreachableWhileItIs() {
        var stats = SessionStats()
        stats.byState = ["running": 1]
        #expect(
            StatusLine.text(stats: stats, note: nil, stopping: false, network: .unreachable)
                == "network unreachable; 1 running, 0 suspended, 0 served")
        #expect(
            StatusLine.text(stats: stats, note: nil, stopping: false, network: .reachable)
                == "1 running, 0 suspended, 0 served")
        #expect(
            StatusLine.text(stats: stats, note: nil, stopping: false, network: .unknown)
                == "1 running, 0 suspended, 0 served")
    }

    @Test func theLogSaysWhenTheNetworkGoesAndOverWhatItComesBack() {
        let eth0 = Reachability(status: .reachable, interface: "eth0", interfaceKind: "ethernet")
        let wlan0 = Reachability(status: .reachable, interface: "wlan0", interfaceKind: "wifi")
        let gone = Reachability(status: .unreachable)
        #expect(NetworkReporter.logMessage(from: .unknown, to: eth0) == "network reachable via eth0 (ethernet)")
        #expect(NetworkReporter.logMessage(from: eth0, to: gone) == "network unreachable")
        #expect(NetworkReporter.logMessage(from: gone, to: gone) == nil)
        #expect(NetworkReporter.logMessage(from: eth0, to: wlan0) == "network reachable via wlan0 (wifi)")
        #expect(NetworkReporter.logMessage(from: eth0, to: eth0) == nil)
    }
}
