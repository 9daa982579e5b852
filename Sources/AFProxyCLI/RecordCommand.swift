import AFProxyAPI
import ArgumentParser
import FoundationEssentials

/// `afproxyctl record HOST[/PATH]`: keep the bodies of the tasks to HOST (under PATH) from now on,
/// up to `--max` each; `--list` and `--remove ID`. The record kind's rules through
/// `/v1/rules/records`, which `afproxyctl rules records` shows as well.
struct Record: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Keep the request and response bodies of new tasks to a host (and path), to read with body.",
        discussion: """
            Bodies are kept as they passed (content codings included) in the state directory's bodies/ \
            (files 0600), up to --max bytes each (1MiB by default, 64MiB at most; a longer body is kept cut), \
            all of them within record-max-total (256MiB; the oldest go first). Rules survive restarts; \
            the bodies do not. Bodies hold secrets: record only what you mean to read.
            """)

    @ParentCommand var root: AFProxyCtl

    @Argument(
        help: ArgumentHelp(
            "HOST or HOST/PATH (a host name, *.domain, an address; a path prefix, a trailing * allowed).",
            valueName: "target"))
    var target: String?

    @Option(help: ArgumentHelp("Bytes kept of each body: 64K, 1MiB, 10M.", valueName: "size"))
    var max: String?

    @Flag(help: "Keep only request bodies.") var requestOnly = false
    @Flag(help: "Keep only response bodies.") var responseOnly = false
    @Flag(help: "List the record rules.") var list = false
    @Option(help: ArgumentHelp("Remove the record rule with this id.", valueName: "id")) var remove: Int?
    @Flag(help: "Print the API's JSON.") var json = false

    mutating func validate() throws {
        let modes = [self.target != nil, self.list, self.remove != nil].filter { $0 }.count
        guard modes == 1 else { throw ValidationError("give HOST[/PATH], --list or --remove ID") }
        guard !(self.requestOnly && self.responseOnly) else {
            throw ValidationError("--request-only and --response-only exclude each other")
        }
        _ = try self.body()
    }

    /// The rule asked for, checked here as the daemon would check it.
    func body() throws -> RecordRequestBody? {
        guard let target = self.target else { return nil }
        let slash = target.firstIndex(of: "/")
        let host = String(target[..<(slash ?? target.endIndex)])
        do {
            _ = try HostPattern(host)
        } catch {
            throw ValidationError(error.message)
        }
        var max: Int64?
        if let text = self.max {
            do {
                max = try ByteRate(parsing: text).bytesPerSecond
            } catch {
                throw ValidationError("--max: \(error)")
            }
        }
        return RecordRequestBody(
            host: host, path: slash.map { String(target[$0...]) }, max: max,
            request: self.responseOnly ? false : nil, response: self.requestOnly ? false : nil)
    }

    func run() throws {
        let global = self.root.global
        if let id = self.remove {
            let answer = try global.call("DELETE", "/v1/rules/records/\(id)")
            return Console.output(self.json ? String(decoding: answer, as: UTF8.self) : "removed record rule \(id)")
        }
        if self.list {
            let answer = try global.call("GET", "/v1/rules/records")
            if self.json { return Console.output(String(decoding: answer, as: UTF8.self)) }
            let rules = try Console.decoder().decode(Listed.self, from: Data(answer)).rules
            guard !rules.isEmpty else { return Console.output("no record rule: no body is kept") }
            return Console.output(Self.table(rules))
        }
        guard let body = try self.body() else { return }
        let answer = try global.call("POST", "/v1/rules/records", body: Array(try JSONEncoder().encode(body)))
        if self.json { return Console.output(String(decoding: answer, as: UTF8.self)) }
        let rule = try Console.decoder().decode(RecordRule.self, from: Data(answer))
        Console.output(String(rule.id))
    }

    private struct Listed: Decodable {
        var rules: [RecordRule]
    }

    /// `ID  HOST  PATH  MAX  SIDES`, aligned.
    static func table(_ rules: [RecordRule]) -> String {
        let rows =
            [["ID", "HOST", "PATH", "MAX", "BODIES"]]
            + rules.map { rule in
                let sides = [rule.request ? "request" : nil, rule.response ? "response" : nil].compactMap { $0 }
                return [
                    String(rule.id), rule.host.description, rule.path ?? "*", "\(ByteRate(bytesPerSecond: rule.max))",
                    sides.joined(separator: "+"),
                ]
            }
        return RuleTable.aligned(rows)
    }
}
