/// What record and map rules name: a host pattern and, optionally, a path prefix (`/v1/`; a
/// trailing `*` is the same prefix). A request matches when its host does and its path (query
/// included) starts with the prefix.
package struct HostPathPattern: Sendable, Equatable {
    package var host: HostPattern
    package var path: String?

    package init(host: HostPattern, path: String?) {
        self.host = host
        self.path = path
    }

    /// The prefix without its `*`; "" for none.
    package var prefix: String {
        guard let path = self.path else { return "" }
        return path.hasSuffix("*") ? String(path.dropLast()) : path
    }

    package func matches(host: String, path: String) -> Bool {
        self.host.matches(host: host) && path.hasPrefix(self.prefix)
    }

    /// What follows the prefix in a path it matched.
    package func remainder(of path: String) -> Substring {
        path.dropFirst(self.prefix.count)
    }

    /// The path and query of an absolute URL: from the first `/` after the authority ("/" when
    /// there is none).
    package static func path(ofURL url: String) -> String {
        let afterScheme = url.firstRange(of: "://").map { url[$0.upperBound...] } ?? url[...]
        guard let start = afterScheme.firstIndex(where: { $0 == "/" || $0 == "?" }) else { return "/" }
        let rest = afterScheme[start...]
        return rest.first == "?" ? "/" + rest : String(rest)
    }

    /// The first of `rules` whose pattern names the request, with the URL's path. The host is
    /// matched first: a request to a host no rule names (the usual case while some rule is in
    /// force) costs host comparisons only, not the path, a String made from the URL.
    package static func first<Rule>(
        of rules: [Rule], host: String, url: String, pattern: (Rule) -> HostPathPattern
    ) -> (rule: Rule, path: String)? {
        var path: String?
        for rule in rules {
            let named = pattern(rule)
            guard named.host.matches(host: host) else { continue }
            let requestPath = path ?? Self.path(ofURL: url)
            path = requestPath
            if requestPath.hasPrefix(named.prefix) { return (rule, requestPath) }
        }
        return nil
    }

    /// `host` as a pattern and `path` as a prefix from the JSON a rule kind's `POST` takes, or why not.
    package static func parse(host: String, path: String?) throws(RuleRequestError) -> HostPathPattern {
        let pattern: HostPattern
        do {
            pattern = try HostPattern(host)
        } catch {
            throw RuleRequestError(error.message)
        }
        if let path, !path.hasPrefix("/") {
            throw RuleRequestError("path must start with /, got \(path.prefix(80))")
        }
        return HostPathPattern(host: pattern, path: path.map { $0.isEmpty ? "/" : $0 })
    }
}
