import AFProxyAPI
import ArgumentParser
import FoundationEssentials

/// `afproxyctl intercept HOST | --remove HOST | --list`: which HTTPS hosts afproxy intercepts with
/// its local CA, so that each request to them is a task of its own.
struct Intercept: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Intercept HTTPS to a host with the local CA, so each of its requests becomes a task.",
        discussion: """
            HOST is a host name, *.domain, an address or * (every host). Clients must trust the local CA \
            (afproxyctl ca says how); a client that refuses its certificate is recorded on its stream task, and \
            with intercept-auto-passthrough (default on) that host is passed through as a plain tunnel for a while, \
            listed here with the reason. Rules added here survive reloads and restarts; --remove also ends a \
            pass-through. Rules from intercept-hosts in the config file change there.
            """)

    @ParentCommand var root: AFProxyCtl
    var global: GlobalOptions { self.root.global }
    @Argument(help: "The host pattern to intercept (or to remove with --remove).") var host: String?
    @Flag(name: .long, help: "Remove the runtime rule or the pass-through for HOST.") var remove = false
    @Flag(name: .long, help: "List the intercept rules, exclusions and pass-throughs (the default).") var list = false
    @Flag(name: .long, help: "Print the API's JSON.") var json = false

    func validate() throws {
        if self.remove && self.host == nil { throw ValidationError("--remove needs the HOST pattern to remove") }
        if self.list && self.host != nil { throw ValidationError("--list takes no HOST") }
        if let host = self.host {
            do throws(HostPatternError) {
                _ = try HostPattern(host)
            } catch {
                throw ValidationError(error.message)
            }
        }
    }

    func run() throws {
        let answer: [UInt8]
        switch (self.host, self.remove) {
        case (let host?, true):
            answer = try self.global.call("DELETE", "/v1/intercept/\(Pin.escaped(host))")
        case (let host?, false):
            let body = try JSONEncoder().encode(InterceptRequestBody(host: host))
            answer = try self.global.call("POST", "/v1/intercept", body: Array(body))
        case (nil, _):
            answer = try self.global.call("GET", "/v1/intercept")
        }
        if self.json { return Console.output(String(decoding: answer, as: UTF8.self)) }
        let list = try Console.decoder().decode(InterceptList.self, from: Data(answer))
        Console.output(InterceptText.render(list))
    }
}

/// The `intercept --list` text: one line per rule, exclusion and pass-through.
enum InterceptText {
    static func render(_ list: InterceptList) -> String {
        var lines: [String] = []
        if list.hosts.isEmpty { lines.append("no host is intercepted") }
        for host in list.hosts { lines.append("intercept  \(host.pattern)  (\(host.origin))") }
        for pattern in list.exclude { lines.append("exclude    \(pattern)  (config)") }
        for entry in list.passthrough {
            let until = entry.until.formatted(.iso8601)
            lines.append("passthrough  \(entry.host)  until \(until): \(entry.reason)")
        }
        lines.append(
            list.passthroughSeconds.map { "auto-passthrough: \($0) s after a refused certificate" }
                ?? "auto-passthrough: off")
        return lines.joined(separator: "\n")
    }
}
