import AFProxyAPI
import ArgumentParser
import FoundationEssentials

/// `afproxyctl throttle`: limits a task, the tasks to some hosts, or all of them, to a rate in
/// bytes per second; `--list` (or no argument) shows the rules.
struct Throttle: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Limit a task, a host or everything to a rate (bytes per second); --list shows the rules.",
        usage: """
            afproxyctl throttle ID RATE [--down|--up]
            afproxyctl throttle --host PATTERN RATE [--down|--up]
            afproxyctl throttle --global RATE [--down|--up]
            afproxyctl throttle --list
            """,
        discussion: """
            RATE: 500K, 2M, 1.5MiB or a number of bytes (K, M, G: powers of 1000; KiB, MiB, GiB: of 1024). \
            Without --down or --up both directions get the rate, each on its own. Host and global rules are \
            kept in the state directory; a task's rule ends with the task. A task moves bytes only as fast \
            as its own rule, the most specific host rule and the global rule all allow.
            """)

    @ParentCommand var root: AFProxyCtl
    var global: GlobalOptions { self.root.global }
    @Argument(help: "ID RATE, or RATE with --host/--global.") var values: [String] = []
    @Option(name: .long, help: "A host rule: NAME, *.DOMAIN, ADDRESS or ADDRESS/LENGTH.") var host: String?
    @Flag(name: .customLong("global"), help: "The global rule, over every task.") var everything = false
    @Flag(name: .long, help: "Only responses (and a tunnel's bytes from the origin).") var down = false
    @Flag(name: .long, help: "Only request bodies (and a tunnel's bytes from the client).") var up = false
    @Flag(name: .long, help: "List the rules in force.") var list = false
    @Flag(name: .long, help: "Print the API's JSON.") var json = false

    func run() throws {
        let action = try ThrottleArguments.parse(
            self.values, host: self.host, global: self.everything, down: self.down, up: self.up, list: self.list,
            removing: false)
        switch action {
        case .list:
            let body = try self.global.call("GET", "/v1/throttle")
            if self.json { return Console.output(String(decoding: body, as: UTF8.self)) }
            let list = try Console.decoder().decode(ThrottleRuleList.self, from: Data(body))
            Console.output(ThrottleText.table(list.rules))
        case .set(let scope, let rate, let directions):
            let request = ThrottleSetBody(
                down: directions.contains(.down) ? String(rate.bytesPerSecond) : nil,
                up: directions.contains(.up) ? String(rate.bytesPerSecond) : nil)
            let body = try self.global.call(
                "PUT", ThrottleArguments.path(scope), body: Array(try JSONEncoder().encode(request)))
            if self.json { return Console.output(String(decoding: body, as: UTF8.self)) }
            let rule = try Console.decoder().decode(ThrottleRule.self, from: Data(body))
            Console.output(ThrottleText.rule(rule))
        case .remove:
            break
        }
    }
}

/// `afproxyctl unthrottle`: removes a rule (or one direction of it).
struct Unthrottle: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Remove a throttle rule: a task's, a host's or the global one.",
        usage: """
            afproxyctl unthrottle ID [--down|--up]
            afproxyctl unthrottle --host PATTERN [--down|--up]
            afproxyctl unthrottle --global [--down|--up]
            """,
        discussion: "Removing a rule the configuration file set lifts it until a rule is set there again.")

    @ParentCommand var root: AFProxyCtl
    var global: GlobalOptions { self.root.global }
    @Argument(help: "The task id.", completion: TaskIDCompletion.kind) var values: [String] = []
    @Option(name: .long, help: "The host rule's pattern, as it was given.") var host: String?
    @Flag(name: .customLong("global"), help: "The global rule.") var everything = false
    @Flag(name: .long, help: "Only the limit on responses.") var down = false
    @Flag(name: .long, help: "Only the limit on request bodies.") var up = false
    @Flag(name: .long, help: "Print the API's JSON.") var json = false

    func run() throws {
        let action = try ThrottleArguments.parse(
            self.values, host: self.host, global: self.everything, down: self.down, up: self.up, list: false,
            removing: true)
        guard case .remove(let scope, let directions) = action else { return }
        let query = directions.count == 2 ? "" : "?direction=\(directions.first!.rawValue)"
        let body = try self.global.call("DELETE", ThrottleArguments.path(scope) + query)
        if self.json { return Console.output(String(decoding: body, as: UTF8.self)) }
        Console.output(
            "removed the \(scope) throttle" + (directions.count == 2 ? "" : " (\(directions.first!.rawValue))"))
    }
}
