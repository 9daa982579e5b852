import AFProxyAPI
import ArgumentParser
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// `afproxyctl map HOST[/PATH] TARGET`: requests to HOST (under PATH) go to another origin
/// (TARGET a URL: a map-remote rule) or are answered from a file (TARGET a path: map-local).
struct Map: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Send requests to another origin (TARGET a URL), or answer them from a file or directory (a path).",
        discussion: """
            From now on, a new request whose host (and path prefix; a trailing * is the same prefix) HOST[/PATH] \
            names goes to TARGET when it is an http:// or https:// URL, what followed the prefix appended \
            (map api.example.com/v1/ http://127.0.0.1:8080/v1/), its Host field following; or is answered by \
            afproxy from TARGET when it is a path: that file, or under that directory (ending with /) what \
            followed the prefix (index.html for a directory), typed by the file's name; 404 when there is no such \
            file. The daemon reads the file as its own user when the request comes. Prints the rule's id; the \
            task's edits name the rule. Rules are kept across restarts; they are the map-remote and map-local \
            kinds of afproxyctl rules.
            """)

    @ParentCommand var root: AFProxyCtl

    @Argument(help: ArgumentHelp("What to map: HOST, or HOST/PATH.", valueName: "host[/path]")) var pattern: String?
    @Argument(help: ArgumentHelp("An http(s) URL, or a file or directory.", valueName: "target")) var target: String?
    @Flag(help: "List the map rules of both kinds.") var list = false
    @Option(help: ArgumentHelp("Remove the map rule with this id (--local: a map-local one).", valueName: "id"))
    var remove: Int?
    @Flag(help: "With --remove: the id is a map-local rule's.") var local = false
    @Flag(help: "Print the API's JSON.") var json = false

    mutating func validate() throws {
        let adding = self.pattern != nil
        let modes = [adding, self.list, self.remove != nil].filter { $0 }.count
        guard modes == 1 else { throw ValidationError("give HOST[/PATH] TARGET, --list or --remove ID") }
        guard !adding || self.target != nil else { throw ValidationError("give the TARGET: an http(s) URL or a path") }
        guard !self.local || self.remove != nil else { throw ValidationError("--local goes with --remove") }
        if let pattern = self.pattern { _ = try Self.split(pattern) }
    }

    func run() throws {
        let global = self.root.global
        if let id = self.remove {
            let kind = self.local ? "map-local" : "map-remote"
            let answer = try global.call("DELETE", "/v1/rules/\(kind)/\(id)")
            return Console.output(self.json ? String(decoding: answer, as: UTF8.self) : "removed \(kind) rule \(id)")
        }
        if self.list {
            let remote = try global.call("GET", "/v1/rules/map-remote")
            let local = try global.call("GET", "/v1/rules/map-local")
            if self.json {
                return Console.output(
                    #"{"map-remote":"# + String(decoding: remote, as: UTF8.self) + #","map-local":"#
                        + String(decoding: local, as: UTF8.self) + "}")
            }
            let remoteRules = try Console.decoder().decode(Listed<Remote>.self, from: Data(remote)).rules
            let localRules = try Console.decoder().decode(Listed<Local>.self, from: Data(local)).rules
            guard !remoteRules.isEmpty || !localRules.isEmpty else { return Console.output("no map rule") }
            let rows =
                [["ID", "KIND", "HOST", "PATH", "TARGET", "READ AS"]]
                + remoteRules.map { [String($0.id), "remote", $0.host, $0.path ?? "*", $0.to, "-"] }
                + localRules.map {
                    [String($0.id), "local", $0.host, $0.path ?? "*", $0.file, $0.readAs?.description ?? "anyone"]
                }
            return Console.output(RuleTable.aligned(rows))
        }
        guard let pattern = self.pattern, let target = self.target else { return }
        let (host, path) = try Self.split(pattern)
        let lower = target.lowercased()
        let kind: String
        var body: [String: String?] = ["host": host, "path": path]
        if lower.hasPrefix("http://") || lower.hasPrefix("https://") {
            kind = "map-remote"
            body["to"] = target
        } else if lower.contains("://") {
            throw ValidationError("TARGET must be an http:// or https:// URL, or a path, not \(target)")
        } else {
            kind = "map-local"
            body["file"] = Self.absolute(target)
        }
        let answer = try global.call("POST", "/v1/rules/\(kind)", body: Array(try JSONEncoder().encode(body)))
        if self.json { return Console.output(String(decoding: answer, as: UTF8.self)) }
        Console.output(String(try Console.decoder().decode(Identified.self, from: Data(answer)).id))
    }

    /// `HOST[/PATH]` as the API takes it, the host checked here as the daemon checks it.
    static func split(_ pattern: String) throws -> (host: String, path: String?) {
        let slash = pattern.firstIndex(of: "/")
        let host = String(pattern[..<(slash ?? pattern.endIndex)])
        do {
            _ = try HostPattern(host)
        } catch {
            throw ValidationError(error.message)
        }
        return (host, slash.map { String(pattern[$0...]) })
    }

    /// A path as the daemon reads it: absolute (from this directory), a directory ending with `/`.
    static func absolute(_ path: String) -> String {
        var absolute = path
        if !path.hasPrefix("/") {
            let cwd = FileManager.default.currentDirectoryPath
            absolute = cwd.hasSuffix("/") ? cwd + path : cwd + "/" + path
        }
        var isDirectory: Bool = false
        if !absolute.hasSuffix("/"), FileManager.default.fileExists(atPath: absolute, isDirectory: &isDirectory),
            isDirectory
        {
            absolute += "/"
        }
        return absolute
    }

    private struct Listed<Rule: Decodable>: Decodable {
        var rules: [Rule]
    }

    private struct Remote: Decodable {
        var id: Int
        var host: String
        var path: String?
        var to: String
    }

    private struct Local: Decodable {
        var id: Int
        var host: String
        var path: String?
        var file: String
        var readAs: ReadRights?
    }

    private struct Identified: Decodable {
        var id: Int
    }
}
