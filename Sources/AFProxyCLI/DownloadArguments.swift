import AFProxyAPI

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
    /// `--pin sha256//…`, each possibly several joined by ';'.
    var pins: [String] = []
    var insecure = false

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
            guard given.utf8.count == 64, given.allSatisfy(\.isHexDigit) else {
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
        var pins: [String] = []
        for pin in self.pins {
            do throws(PinError) {
                pins += try PinSet.parse(pin)
            } catch {
                throw .usage("--pin: \(error.message)")
            }
        }
        return DownloadRequestBody(
            url: self.url, path: path, headers: headers, sha256: sha256, force: self.force,
            keepPartial: self.keepPartial, pins: pins.isEmpty ? nil : pins, insecure: self.insecure ? true : nil)
    }

    /// `Name: value`, spaces around the value trimmed, by the rule the daemon checks it with
    /// (`HTTPHeaderField(line:)`): the name a token, the value without control bytes.
    static func field(_ text: String) throws(Problem) -> String {
        guard let field = HTTPHeaderField(line: text) else {
            throw .usage("--header takes 'Name: value', not \(text)")
        }
        return "\(field.name): \(field.value)"
    }

    static func absolute(_ path: String, directory: String) -> String {
        if path.hasPrefix("/") { return path }
        let base = directory.hasSuffix("/") ? String(directory.dropLast()) : directory
        return base + "/" + (path.hasPrefix("./") ? String(path.dropFirst(2)) : path)
    }
}
