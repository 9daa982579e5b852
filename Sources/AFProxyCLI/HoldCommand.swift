import AFProxyAPI
import ArgumentParser
import FoundationEssentials

/// `afproxyctl hold add|list|rm`: breakpoints without editing. A new task that matches a rule is
/// created suspended before any byte goes upstream; `resume` lets it go, `cancel` answers its
/// client 503.
struct Hold: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Hold new tasks that match a rule, suspended before anything goes upstream.",
        discussion: """
            A held task is listed as suspended, "held by rule N": `afproxyctl resume ID` (or `resume --all`) lets \
            it go, `afproxyctl cancel ID` answers its client 503. Rules survive reloads and restarts.
            """,
        subcommands: [HoldAddCommand.self, HoldListCommand.self, HoldRemoveCommand.self],
        defaultSubcommand: HoldListCommand.self)

    @ParentCommand var root: AFProxyCtl
}

struct HoldAddCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "add",
        abstract: "Add a hold rule; prints its id. Every condition given must match.")

    @ParentCommand var hold: Hold
    @Option(name: .long, help: "A host name, *.domain, an address or a CIDR (as the client named the host).")
    var host: String?
    @Option(name: .long, help: "The request method, case-sensitive (CONNECT for tunnels).") var method: String?
    @Option(name: .long, help: "A regular expression found anywhere in the URL (host:port for a tunnel).")
    var url: String?
    @Option(name: .long, help: "The task kind: data, upload, stream or download.") var kind: String?
    @Flag(name: .long, help: "Hold every new task (a rule with no condition).") var all = false
    @Flag(name: .long, help: "Remove the rule once it caught a task.") var once = false
    @Flag(
        name: .long,
        help: "Hold at the response: once the origin's head came, before anything reaches the client (HTTP requests).")
    var response = false
    @Flag(name: .long, help: "Print the API's JSON.") var json = false

    func validate() throws {
        do throws(HoldRuleError) {
            _ = try self.body.conditions()
        } catch {
            throw ValidationError(error.message)
        }
    }

    var body: HoldRequestBody {
        HoldRequestBody(
            host: self.host, method: self.method, url: self.url, kind: self.kind, all: self.all ? true : nil,
            once: self.once ? true : nil, response: self.response ? true : nil)
    }

    func run() throws {
        let request = try JSONEncoder().encode(self.body)
        let answer = try self.hold.root.global.call("POST", "/v1/holds", body: Array(request))
        if self.json { return Console.output(String(decoding: answer, as: UTF8.self)) }
        let rule = try Console.decoder().decode(HoldRule.self, from: Data(answer))
        Console.output(String(rule.id))
    }
}

struct HoldListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "List the hold rules in order.")

    @ParentCommand var hold: Hold
    @Flag(name: .long, help: "Print the API's JSON.") var json = false

    func run() throws {
        let answer = try self.hold.root.global.call("GET", "/v1/holds")
        if self.json { return Console.output(String(decoding: answer, as: UTF8.self)) }
        let list = try Console.decoder().decode(HoldList.self, from: Data(answer))
        Console.output(HoldTable(rules: list.holds).render())
    }
}

struct HoldRemoveCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rm", abstract: "Remove a hold rule (tasks it holds stay held until resumed or canceled).")

    @ParentCommand var hold: Hold
    @Argument(help: "The rule's id, as `hold list` shows it.") var rule: Int
    @Flag(name: .long, help: "Print the API's JSON.") var json = false

    func validate() throws {
        guard self.rule > 0 else { throw ValidationError("a rule id is a positive integer, not \(self.rule)") }
    }

    func run() throws {
        let answer = try self.hold.root.global.call("DELETE", "/v1/holds/\(self.rule)")
        if self.json { return Console.output(String(decoding: answer, as: UTF8.self)) }
        Console.output("removed hold rule \(self.rule)")
    }
}

/// The `hold list` table: ID CONDITIONS AT ONCE CAUGHT.
struct HoldTable {
    var rules: [HoldRule]

    func render() -> String {
        guard !self.rules.isEmpty else { return "no hold rules" }
        var rows = [["ID", "CONDITIONS", "AT", "ONCE", "CAUGHT"]]
        for rule in self.rules {
            rows.append([
                String(rule.id), rule.conditions.summary, rule.response ? "response" : "request",
                rule.once ? "yes" : "no",
                String(rule.caught),
            ])
        }
        return RuleTable.aligned(rows)
    }
}
