import AFProxyAPI
import ArgumentParser
import FoundationEssentials

/// `afproxyctl status`: the daemon at a glance — version, uptime, the network, task counts, the
/// captures running, and a state file that does not hold what is in force, when there is one.
struct Status: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Version, uptime, whether the network is reachable (and over which interface), task counts.")

    @ParentCommand var root: AFProxyCtl
    var global: GlobalOptions { self.root.global }
    @Flag(name: .long, help: "Print the API's JSON.") var json = false

    func run() throws {
        let body = try self.global.call("GET", "/v1/status")
        if self.json { return Console.output(String(decoding: body, as: UTF8.self)) }
        Console.output(Self.render(try Console.decoder().decode(DaemonStatus.self, from: Data(body))))
    }

    static func render(_ status: DaemonStatus) -> String {
        let tasks = status.tasks
        let states = tasks.byState.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }
        let live = states.isEmpty ? "\(tasks.live) live" : "\(tasks.live) live (\(states.joined(separator: ", ")))"
        let lines =
            """
            afproxy \(status.version), up \(Formatting.duration(status.uptimeSeconds))
            network   \(ReachabilityText.describe(status.network))
            tasks     \(live), \(tasks.served) served (\(tasks.failed) failed, \(tasks.canceled) canceled)
            """
            // The proxy, or why it is unreachable (the reason names it).
            + (status.upstreamProxy.map {
                "\nupstream  " + ($0.reachable ? $0.proxy : "unreachable: \($0.error ?? $0.proxy)")
            } ?? "")
            + Self.captureLines(status.captures)
            + (status.recording.map { Self.recordingLine($0) } ?? "")
        guard let problems = tasks.stateFiles, !problems.isEmpty else { return lines }
        let files = problems.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }
        return lines + "\nstate files " + files.joined(separator: "\n            ")
    }

    /// `recording 2 rules, 14 bodies kept (3.1MiB of 256MiB)`: bodies hold secrets.
    static func recordingLine(_ recording: RecordingStatus) -> String {
        let rules = recording.rules == 1 ? "1 rule" : "\(recording.rules) rules"
        let bodies = recording.bodies == 1 ? "1 body" : "\(recording.bodies) bodies"
        return "\nrecording \(rules), \(bodies) kept (\(Formatting.bytes(recording.bytes)) of "
            + "\(Formatting.bytes(recording.maxTotal)))"
    }

    /// `captures  #3 tests, pid 4242: pytest -x`, one line each after the first; nothing when
    /// none runs.
    static func captureLines(_ captures: [CaptureSummary]) -> String {
        captures.enumerated().map { index, capture in
            let intercept = capture.intercept ? " (intercepted)" : ""
            return (index == 0 ? "\ncaptures  " : "\n          ")
                + "#\(capture.id) \(capture.name), pid \(capture.pid)\(intercept): \(capture.commandLine)"
        }.joined()
    }
}
