import AFProxyModel

/// `afproxyctl download`'s options turned into the request body, checked before anything is
/// sent: what can be refused without the daemon should not cost a round trip, nor leave a task
/// behind that fails a moment later.
struct DownloadArguments: Equatable {
    var url: String
    var output: String?
    var headers: [String] = []
    var sha256: String?
    var force = false
    var keepPartial = false

    /// Why the arguments cannot be sent.
    enum Problem: Error, Equatable {
        /// What the daemon would refuse as well (a URL it cannot download): exit code 1, like
        /// its refusals.
        case refused(String)
        /// An option that is malformed: exit code 2, like every usage error.
        case usage(String)
    }

    /// The body of `POST /v1/downloads`; `directory` is the caller's working directory, which a
    /// relative `-o` is resolved against because the daemon runs elsewhere.
    func body(directory: String) throws(Problem) -> DownloadRequestBody {
        let scheme = self.url.prefix { $0 != ":" }.lowercased()
        guard scheme == "http" || scheme == "https", self.url.dropFirst(scheme.count).hasPrefix("://") else {
            throw .refused("only http:// and https:// URLs can be downloaded: \(self.url)")
        }
        var sha256: String?
        if let given = self.sha256 {
            guard given.utf8.count == 64, given.utf8.allSatisfy(\.isHexDigit) else {
                throw .usage("--sha256 takes 64 hex digits, not \(given)")
            }
            sha256 = given.lowercased()
        }
        var headers: [String] = []
        for header in self.headers {
            headers.append(try Self.field(header))
        }
        var path: String?
        if let output = self.output {
            guard !output.isEmpty else { throw .usage("-o takes a path, not an empty string") }
            path = Self.absolute(output, directory: directory)
        }
        return DownloadRequestBody(
            url: self.url, path: path, headers: headers, sha256: sha256, force: self.force,
            keepPartial: self.keepPartial)
    }

    /// `Name: value`, spaces around the value trimmed: the name a token (RFC 9110 §5.1), the
    /// value without the control characters that would end the field or the request early.
    static func field(_ text: String) throws(Problem) -> String {
        let problem = Problem.usage("--header takes 'Name: value', not \(text)")
        guard let colon = text.firstIndex(of: ":") else { throw problem }
        let name = text[..<colon]
        guard !name.isEmpty, name.utf8.allSatisfy(\.isTokenCharacter) else { throw problem }
        let value = text[text.index(after: colon)...].trimmedSpaces
        guard !value.utf8.contains(where: { ($0 < 0x20 && $0 != 0x09) || $0 == 0x7F }) else { throw problem }
        return "\(name): \(value)"
    }

    static func absolute(_ path: String, directory: String) -> String {
        if path.hasPrefix("/") { return path }
        let base = directory.hasSuffix("/") ? String(directory.dropLast()) : directory
        return base + "/" + (path.hasPrefix("./") ? String(path.dropFirst(2)) : path)
    }
}

extension UInt8 {
    fileprivate var isHexDigit: Bool {
        (48...57).contains(self) || (65...70).contains(self) || (97...102).contains(self)
    }

    /// tchar: letters, digits and ``!#$%&'*+-.^_`|~``.
    fileprivate var isTokenCharacter: Bool {
        (48...57).contains(self) || (65...90).contains(self) || (97...122).contains(self)
            || "!#$%&'*+-.^_`|~".utf8.contains(self)
    }
}
