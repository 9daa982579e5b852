/// Takes the credentials out of a program's arguments before afproxy keeps them (a task's
/// `clientProcess.commandLine`, the log, HAR): `curl -u alice:pw`, `-H 'Authorization: Bearer t'`,
/// `--cookie a=b`, `https://alice:pw@host/`, `TOKEN=t`. Credentials are never logged, and a command
/// line is where people put them. What is recognised is the common spellings of curl, wget and
/// HTTPie; an argument is replaced whole by `<redacted>`, or its value only where a name says what
/// it was (`Authorization: <redacted>`), so the line still tells one invocation from another.
package enum CommandLineRedaction {
    package static let redacted = "<redacted>"

    /// Options whose next argument is a credential.
    private static let secretOptions: Set<String> = [
        "-u", "--user", "-U", "--proxy-user", "--oauth2-bearer", "--password", "--http-password",
        "--proxy-password", "--ftp-password", "--pass", "-b", "--cookie", "--proxy-pass", "--key-password",
    ]
    /// Options whose next argument is a header field (`Name: value`).
    private static let headerOptions: Set<String> = ["-H", "--header", "--proxy-header"]
    /// Header fields that carry credentials.
    private static let secretFields: Set<String> = ["authorization", "proxy-authorization", "cookie", "set-cookie"]
    /// Words in a `NAME=value` argument's name that say its value is a secret.
    private static let secretWords = ["password", "passwd", "secret", "token", "apikey", "api_key", "api-key"]

    package static func redact(_ arguments: [String]) -> [String] {
        var out: [String] = []
        out.reserveCapacity(arguments.count)
        var next: Next = .plain
        for argument in arguments {
            switch next {
            case .secret:
                out.append(Self.redacted)
            case .header:
                out.append(Self.field(argument) ?? Self.userInfo(argument))
            case .plain:
                out.append(Self.one(argument))
            }
            next =
                Self.secretOptions.contains(argument)
                ? .secret : Self.headerOptions.contains(argument) ? .header : .plain
        }
        return out
    }

    private enum Next {
        case plain
        case secret
        case header
    }

    /// An argument on its own: an option with its value attached, a field, a `NAME=value`, a URL.
    private static func one(_ argument: String) -> String {
        if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
            let option = String(argument[..<equals])
            let value = String(argument[argument.index(after: equals)...])
            if Self.secretOptions.contains(option) { return option + "=" + Self.redacted }
            if Self.headerOptions.contains(option) { return option + "=" + (Self.field(value) ?? Self.userInfo(value)) }
        }
        // curl's attached short forms: -ualice:pw, -Halso, -bcookies.
        for option in ["-u", "-U", "-b"] where argument.hasPrefix(option) && argument.count > 2 {
            return option + Self.redacted
        }
        if argument.hasPrefix("-H"), argument.count > 2, let field = Self.field(String(argument.dropFirst(2))) {
            return "-H" + field
        }
        // HTTPie's `Authorization:'Bearer t'`, and `Cookie:a=b`.
        if let field = Self.field(argument) { return field }
        if !argument.hasPrefix("-"), let equals = argument.firstIndex(of: "="), !argument[..<equals].contains("/") {
            let name = argument[..<equals].lowercased()
            if Self.secretWords.contains(where: { name.contains($0) }) {
                return String(argument[...equals]) + Self.redacted
            }
        }
        return Self.userInfo(argument)
    }

    /// `Name: value` with a credential's name, its value redacted; nil for anything else.
    private static func field(_ text: String) -> String? {
        guard let colon = text.firstIndex(of: ":") else { return nil }
        let name = text[..<colon]
        guard !name.isEmpty, !name.contains(" "), Self.secretFields.contains(name.lowercased()) else { return nil }
        return String(name) + ": " + Self.redacted
    }

    /// A URL's `user:password@` (anywhere in the argument) as `<redacted>@`.
    private static func userInfo(_ text: String) -> String {
        guard let scheme = text.firstRange(of: "://") else { return text }
        let rest = text[scheme.upperBound...]
        let ends: Set<Character> = ["/", "?", "#"]
        let authorityEnd = rest.firstIndex(where: { ends.contains($0) }) ?? rest.endIndex
        guard let at = rest[..<authorityEnd].lastIndex(of: "@") else { return text }
        return String(text[..<scheme.upperBound]) + Self.redacted + String(rest[at...])
    }
}
