/// The timing and connection facts of one transfer, from curl's `*_TIME_T` infos, in
/// milliseconds from the start of the transfer. Nil means the phase did not happen (yet).
package struct TaskMetrics: Sendable, Codable, Equatable {
    package var dnsMs: Double?
    package var connectMs: Double?
    package var tlsMs: Double?
    package var ttfbMs: Double?
    package var totalMs: Double?
    package var reusedConnection: Bool?
    package var remoteAddress: String?
    package var httpVersion: String?

    package init(
        dnsMs: Double? = nil, connectMs: Double? = nil, tlsMs: Double? = nil, ttfbMs: Double? = nil,
        totalMs: Double? = nil, reusedConnection: Bool? = nil, remoteAddress: String? = nil,
        httpVersion: String? = nil
    ) {
        self.dnsMs = dnsMs
        self.connectMs = connectMs
        self.tlsMs = tlsMs
        self.ttfbMs = ttfbMs
        self.totalMs = totalMs
        self.reusedConnection = reusedConnection
        self.remoteAddress = remoteAddress
        self.httpVersion = httpVersion
    }

    // Encode nil as null so that every key is always present in the task's JSON.
    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(self.dnsMs, forKey: .dnsMs)
        try container.encode(self.connectMs, forKey: .connectMs)
        try container.encode(self.tlsMs, forKey: .tlsMs)
        try container.encode(self.ttfbMs, forKey: .ttfbMs)
        try container.encode(self.totalMs, forKey: .totalMs)
        try container.encode(self.reusedConnection, forKey: .reusedConnection)
        try container.encode(self.remoteAddress, forKey: .remoteAddress)
        try container.encode(self.httpVersion, forKey: .httpVersion)
    }
}
