/// Which body of a task: what the client sent, or what it was answered.
package enum BodySide: String, Sendable, Codable, CaseIterable {
    case request
    case response
}

/// A body a record rule kept (`BodyStore`): how many bytes are in its file, how many passed, and
/// whether the file holds less than passed (the rule's limit, or a disk that fell behind).
package struct RecordedBody: Sendable, Codable, Equatable {
    package var rule: Int
    package var size: Int64
    package var seen: Int64
    package var cut: Bool
    /// Why it was cut: `limit`, `disk` (the writes fell behind or failed), `total` (removed to keep
    /// `record-max-total`); nil when it was not.
    package var cutBy: String?

    package init(rule: Int, size: Int64 = 0, seen: Int64 = 0, cut: Bool = false, cutBy: String? = nil) {
        self.rule = rule
        self.size = size
        self.seen = seen
        self.cut = cut
        self.cutBy = cutBy
    }

    // Encode nil as null: clients see every documented key.
    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(self.rule, forKey: .rule)
        try container.encode(self.size, forKey: .size)
        try container.encode(self.seen, forKey: .seen)
        try container.encode(self.cut, forKey: .cut)
        try container.encode(self.cutBy, forKey: .cutBy)
    }
}

/// A task's recorded bodies, as its record shows them (`bodies`); a side not recorded is null.
package struct RecordedBodies: Sendable, Codable, Equatable {
    package var request: RecordedBody?
    package var response: RecordedBody?

    package init(request: RecordedBody? = nil, response: RecordedBody? = nil) {
        self.request = request
        self.response = response
    }

    package subscript(side: BodySide) -> RecordedBody? {
        side == .request ? self.request : self.response
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(self.request, forKey: .request)
        try container.encode(self.response, forKey: .response)
    }
}
