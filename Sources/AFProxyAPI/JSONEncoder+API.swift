import FoundationEssentials

extension JSONEncoder {
    /// The control API's one JSON configuration: keys sorted (stable bytes, which the hand-written
    /// writers such as `TaskRecord.writeJSON` reproduce), dates in ISO 8601, slashes unescaped.
    /// The API's answers and feeds use it, and so do the tests that hold those writers to
    /// `Codable`: were each to configure its own, a writer could drift from the API unnoticed.
    package static func api() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }
}
