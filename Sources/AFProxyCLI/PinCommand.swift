import AFProxyAPI
import ArgumentParser
import FoundationEssentials

/// `afproxyctl pin HOST[:PORT]`: the pin of the key a TLS host presents now, as a `pin` line of
/// the config takes it. The daemon makes the connection, verified as its downloads' are, so the
/// pin printed is that of a host the daemon already trusts.
struct Pin: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print the sha256// pin of the public key a TLS host presents now (the daemon connects).",
        discussion: """
            Prints a line for the config: pin = HOST sha256//BASE64. The port defaults to 443. Exit 1 with the \
            reason when the host cannot be reached or its certificate does not verify.
            """)

    @ParentCommand var root: AFProxyCtl
    var global: GlobalOptions { self.root.global }
    @Argument(help: "HOST or HOST:PORT ([IPv6]:PORT).") var target: String
    @Flag(name: .long, help: "Print the API's JSON.") var json = false

    func run() throws {
        guard let (host, port) = Self.split(self.target) else {
            throw ValidationError("expected HOST or HOST:PORT, not \(self.target)")
        }
        let query = "host=\(Self.escaped(host))&port=\(port)"
        let answer = try self.global.call("GET", "/v1/pin?\(query)")
        if self.json { return Console.output(String(decoding: answer, as: UTF8.self)) }
        let pin = try Console.decoder().decode(PinAnswer.self, from: Data(answer))
        Console.output("pin = \(pin.host) \(pin.pin)")
    }

    /// `host`, `host:port`, `[v6]` or `[v6]:port`.
    static func split(_ text: String) -> (String, Int)? {
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return nil }
            let host = String(text[text.index(after: text.startIndex)..<close])
            let rest = text[text.index(after: close)...]
            if rest.isEmpty { return host.isEmpty ? nil : (host, 443) }
            guard rest.hasPrefix(":"), let port = Int(rest.dropFirst()), (1...65535).contains(port) else { return nil }
            return (host, port)
        }
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard !parts[0].isEmpty, parts.count <= 2 else { return nil }
        guard parts.count == 2 else { return (String(parts[0]), 443) }
        guard let port = Int(parts[1]), (1...65535).contains(port) else { return nil }
        return (String(parts[0]), port)
    }

    /// Percent-encodes what a query value may not hold as it is.
    static func escaped(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: ":"):
                out.append(Character(Unicode.Scalar(byte)))
            default:
                out += "%" + (byte < 16 ? "0" : "") + String(byte, radix: 16, uppercase: true)
            }
        }
        return out
    }
}
