import AFProxyAPI
import ArgumentParser
import FoundationEssentials

/// `afproxyctl web`: the web dashboard's address with its token, to open in a browser. The
/// daemon answers it over the control socket, which only its user and group may use.
struct Web: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print the web dashboard's address with its access token (web-listen must be on).")

    @ParentCommand var root: AFProxyCtl
    var global: GlobalOptions { self.root.global }
    @Flag(name: .long, help: "Print the API's JSON (url, token, tokenFile).") var json = false

    func run() throws {
        let body = try self.global.call("GET", "/v1/web")
        if self.json { return Console.output(String(decoding: body, as: UTF8.self)) }
        Console.output(try Console.decoder().decode(WebAddress.self, from: Data(body)).openURL)
    }
}
