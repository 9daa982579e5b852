import AFProxyModel

/// A rule as the control API and `throttle.json` write it:
/// `{"scope": "host", "host": "*.example.org", "task": null, "down": 1000000, "up": null,
/// "rule": "host *.example.org"}`, rates in bytes per second; `rule` is for people and ignored
/// when read.
extension ThrottleRule: Codable {
    private enum CodingKeys: String, CodingKey {
        case scope, task, host, down, up, rule
    }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.scope = try ThrottleScope(
            kind: container.decode(String.self, forKey: .scope),
            task: container.decodeIfPresent(Int.self, forKey: .task),
            host: container.decodeIfPresent(String.self, forKey: .host), codingPath: container.codingPath)
        func rate(_ key: CodingKeys) throws -> ByteRate? {
            guard let value = try container.decodeIfPresent(Int64.self, forKey: key) else { return nil }
            guard value > 0 && value <= ByteRate.maximum else {
                throw DecodingError.dataCorruptedError(forKey: key, in: container, debugDescription: "not a rate")
            }
            return ByteRate(bytesPerSecond: value)
        }
        self.down = try rate(.down)
        self.up = try rate(.up)
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try self.scope.encode(into: &container, scope: .scope, task: .task, host: .host)
        try container.encode(self.down?.bytesPerSecond, forKey: .down)
        try container.encode(self.up?.bytesPerSecond, forKey: .up)
        try container.encode(self.scope.description, forKey: .rule)
    }
}

/// A scope alone (`throttle.json`'s lifted defaults): `{"scope": "global", "task": null, "host": null}`.
extension ThrottleScope: Codable {
    private enum CodingKeys: String, CodingKey {
        case scope, task, host
    }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self = try ThrottleScope(
            kind: container.decode(String.self, forKey: .scope),
            task: container.decodeIfPresent(Int.self, forKey: .task),
            host: container.decodeIfPresent(String.self, forKey: .host), codingPath: container.codingPath)
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try self.encode(into: &container, scope: .scope, task: .task, host: .host)
    }

    fileprivate init(kind: String, task: Int?, host: String?, codingPath: [any CodingKey]) throws {
        switch kind {
        case "global":
            self = .global
        case "task":
            guard let task, task > 0 else {
                throw DecodingError.dataCorrupted(.init(codingPath: codingPath, debugDescription: "task needs an id"))
            }
            self = .task(task)
        case "host":
            guard let host, let pattern = try? HostPattern(host) else {
                throw DecodingError.dataCorrupted(
                    .init(codingPath: codingPath, debugDescription: "host needs a pattern"))
            }
            self = .host(pattern)
        default:
            throw DecodingError.dataCorrupted(
                .init(codingPath: codingPath, debugDescription: "scope must be task, host or global"))
        }
    }

    fileprivate func encode<Key: CodingKey>(
        into container: inout KeyedEncodingContainer<Key>, scope: Key, task: Key, host: Key
    ) throws {
        try container.encode(self.kind, forKey: scope)
        if case .task(let id) = self {
            try container.encode(id, forKey: task)
        } else {
            try container.encodeNil(forKey: task)
        }
        if case .host(let pattern) = self {
            try container.encode(pattern.description, forKey: host)
        } else {
            try container.encodeNil(forKey: host)
        }
    }
}
