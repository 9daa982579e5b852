/// Bytes moved in one direction, like NSProgress: completed so far and the expected total when
/// the message announces it (Content-Length), nil when it is unknown (chunked, close-delimited).
package struct TransferProgress: Sendable, Codable, Equatable {
    package var completed: Int64
    package var total: Int64?

    package init(completed: Int64 = 0, total: Int64? = nil) {
        self.completed = completed
        self.total = total
    }

    /// Between 0 and 1 when the total is known.
    package var fraction: Double? {
        guard let total, total > 0 else { return self.total == 0 ? 1 : nil }
        return min(1, Double(self.completed) / Double(total))
    }

    // Encode nil as null so that "total" is always present.
    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(self.completed, forKey: .completed)
        try container.encode(self.total, forKey: .total)
    }
}
