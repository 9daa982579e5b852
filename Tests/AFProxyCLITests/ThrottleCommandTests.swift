import AFProxyModel
import AFProxyRules
import ArgumentParser
import FoundationEssentials
import Testing

@testable import AFProxyCLI

@Suite struct ThrottleCommandTests {
    func parse(
        _ values: [String], host: String? = nil, global: Bool = false, down: Bool = false, up: Bool = false,
        list: Bool = false, removing: Bool = false
    ) throws -> ThrottleArguments.Action {
        try ThrottleArguments.parse(
            values, host: host, global: global, down: down, up: up, list: list, removing: removing)
    }

    @Test func everyFormOfTheCommand() throws {
        let rate = try ByteRate(parsing: "1.5MiB")
        #expect(try self.parse(["42", "1.5MiB"]) == .set(.task(42), rate, [.down, .up]))
        #expect(
            try self.parse(["1.5MiB"], host: "*.example.org", down: true)
                == .set(.host(try HostPattern("*.example.org")), rate, [.down]))
        #expect(try self.parse(["1.5MiB"], global: true, up: true) == .set(.global, rate, [.up]))
        #expect(try self.parse([], list: true) == .list)
        #expect(try self.parse([]) == .list)
        #expect(try self.parse(["42"], removing: true) == .remove(.task(42), [.down, .up]))
        #expect(try self.parse([], global: true, down: true, removing: true) == .remove(.global, [.down]))
    }

    @Test func usageErrorsSayWhatIsWrong() {
        func message(_ body: () throws -> ThrottleArguments.Action) -> String {
            do {
                _ = try body()
                return ""
            } catch {
                return (error as? ValidationError)?.message ?? "\(error)"
            }
        }
        #expect(message { try self.parse(["fast"], global: true) }.hasPrefix("expected a rate in bytes per second"))
        #expect(message { try self.parse([], global: true) }.hasPrefix("missing the rate"))
        #expect(message { try self.parse(["1M"], host: "a", global: true) } == "give --host or --global, not both")
        #expect(message { try self.parse(["x", "1M"]) }.hasPrefix("expected a task id"))
        #expect(message { try self.parse(["1", "1M", "2M"]) }.hasPrefix("unexpected 2M"))
        #expect(message { try self.parse(["1M"], host: "bad host") }.hasPrefix("--host: expected a host name"))
        #expect(message { try self.parse(["1"], list: true) } == "--list takes no rule or rate")
        #expect(message { try self.parse(["1", "1M"], removing: true) }.hasPrefix("unexpected 1M"))
    }

    @Test func pathsEscapeAPatternWithASlash() throws {
        #expect(ThrottleArguments.path(.global) == "/v1/throttle/global")
        #expect(ThrottleArguments.path(.task(3)) == "/v1/throttle/tasks/3")
        #expect(ThrottleArguments.path(.host(try HostPattern("10.0.0.0/8"))) == "/v1/throttle/hosts/10.0.0.0%2F8")
    }

    @Test func textsForTheRulesAndTheLimits() throws {
        let rules = [
            ThrottleRule(scope: .global, down: try ByteRate(parsing: "10M"), up: try ByteRate(parsing: "10M")),
            ThrottleRule(scope: .host(try HostPattern("*.example.org")), down: try ByteRate(parsing: "1.5MiB")),
        ]
        #expect(
            ThrottleText.table(rules) == """
                RULE                DOWN      UP
                global              10M/s     10M/s
                host *.example.org  1.5MiB/s  -
                """)
        #expect(ThrottleText.table([]) == "no throttle rules")
        #expect(ThrottleText.rule(rules[1]) == "host *.example.org: down 1.5MiB/s, up -")
        let same = TaskLimit(
            down: .init(bytesPerSecond: 1_000_000, rule: "global"), up: .init(bytesPerSecond: 1_000_000, rule: "task 3")
        )
        #expect(ThrottleText.column(same) == "1M/s")
        let down = TaskLimit(down: .init(bytesPerSecond: 500_000, rule: "host a"))
        #expect(ThrottleText.column(down) == "down 500K/s")
        #expect(ThrottleText.column(nil) == "-")
        #expect(ThrottleText.detail(same) == "down 1M/s (global), up 1M/s (task 3)")
    }

    @Test func theListHasALimitColumnOnlyWhenARuleApplies() {
        let now = Date()
        var task = TaskRecord(
            id: 1, kind: .data, state: .running, method: "GET", url: "http://h/", client: "c", createdAt: now)
        #expect(!TaskTable(tasks: rows([task]), terminal: false, now: now).render().contains("LIMIT"))
        task.limit = TaskLimit(down: .init(bytesPerSecond: 2_000_000, rule: "global"))
        let table = TaskTable(tasks: rows([task]), terminal: false, now: now).render()
        #expect(table.split(separator: "\n")[0].hasSuffix("LIMIT"))
        #expect(table.hasSuffix("down 2M/s"))
        #expect(TaskDetail(task: task, terminal: false).render().contains("  limit      down 2M/s (global)"))
    }
}
