import AFProxyAPI
import ArgumentParser
import FoundationEssentials

/// `afproxyctl rules [KIND [--add FIELD=VALUE… | --remove ID]]`: every rule kind edited at runtime
/// through one command, made from the API's JSON alone (`/v1/rules`), so a kind the daemon gains
/// needs no command of its own. `hold` stays for holds, with its checks before it asks.
struct Rules: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List, add and remove the rules of every kind set at runtime (holds, …).",
        discussion: """
            Without KIND, lists the kinds, how many rules each has and the fields a rule of it takes. With KIND, \
            lists its rules, a column a field. --add sends FIELD=VALUE arguments as a JSON object and prints the new \
            rule's id: true and false are sent as booleans, a number as a number, anything else as a string; in \
            double quotes a value is always a string (url='"123"'). The daemon checks the rule and refuses it with \
            the reason (exit 1), as it does an unknown kind, field or id. Rules survive reloads and restarts.
            """)

    @ParentCommand var root: AFProxyCtl
    @Argument(help: "The rule kind, as `afproxyctl rules` lists it (holds); none: list the kinds.") var kind: String?
    @Argument(help: ArgumentHelp("With --add: the rule's fields.", valueName: "FIELD=VALUE")) var fields: [String] = []
    @Flag(name: .long, help: "Add a rule of KIND from the FIELD=VALUE arguments; prints its id.") var add = false
    @Option(name: .long, help: ArgumentHelp("Remove the rule of KIND with this id.", valueName: "ID")) var remove: Int?
    @Flag(name: .long, help: "Print the API's JSON.") var json = false

    func validate() throws {
        if self.add && self.remove != nil { throw ValidationError("--add and --remove go one at a time") }
        guard let kind = self.kind else {
            if self.add || self.remove != nil { throw ValidationError("name the rule kind: afproxyctl rules KIND …") }
            return
        }
        guard !kind.isEmpty, kind.utf8.allSatisfy({ Self.nameBytes.contains($0) }) else {
            throw ValidationError("a rule kind is a name such as holds, not \(kind.prefix(40))")
        }
        if !self.add && !self.fields.isEmpty {
            throw ValidationError("FIELD=VALUE arguments go with --add (afproxyctl rules \(kind) --add FIELD=VALUE …)")
        }
        if let remove = self.remove, remove <= 0 {
            throw ValidationError("a rule id is a positive integer, not \(remove)")
        }
        _ = try self.body()
    }

    /// The `--add` arguments as the JSON object `POST` takes.
    func body() throws -> [String: JSONValue] {
        var body: [String: JSONValue] = [:]
        for field in self.fields {
            guard let equals = field.firstIndex(of: "="), equals != field.startIndex else {
                throw ValidationError("expected FIELD=VALUE, not \(field.prefix(40))")
            }
            let name = String(field[..<equals])
            guard body[name] == nil else { throw ValidationError("\(name) is given twice") }
            body[name] = JSONValue(argument: String(field[field.index(after: equals)...]))
        }
        return body
    }

    func run() throws {
        guard let kind = self.kind else {
            let answer = try self.root.global.call("GET", "/v1/rules")
            if self.json { return Console.output(String(decoding: answer, as: UTF8.self)) }
            return Console.output(RuleTable.kinds(try Console.decoder().decode(RuleKindList.self, from: Data(answer))))
        }
        let path = "/v1/rules/\(kind)"
        if self.add {
            let answer = try self.root.global.call("POST", path, body: Array(try JSONEncoder().encode(self.body())))
            if self.json { return Console.output(String(decoding: answer, as: UTF8.self)) }
            let rule = try Console.decoder().decode([String: JSONValue].self, from: Data(answer))
            return Console.output(rule["id"]?.cell ?? "-")
        }
        if let id = self.remove {
            let answer = try self.root.global.call("DELETE", "\(path)/\(id)")
            if self.json { return Console.output(String(decoding: answer, as: UTF8.self)) }
            return Console.output("removed rule \(id) of \(kind)")
        }
        let answer = try self.root.global.call("GET", path)
        if self.json { return Console.output(String(decoding: answer, as: UTF8.self)) }
        let list = try Console.decoder().decode(RuleList<[String: JSONValue]>.self, from: Data(answer))
        Console.output(RuleTable.rules(list))
    }

    /// What a kind's name may hold: it goes into the API path as it is.
    private static let nameBytes = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_".utf8)
}
