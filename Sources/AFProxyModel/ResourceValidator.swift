/// What identifies one version of a resource, so that bytes of two versions are never joined
/// (RFC 9110 §8.8, §13.1.5): a strong `ETag`, else a `Last-Modified` date. A weak ETag
/// (`W/"…"`) names a version only semantically and cannot guard a byte range.
package enum ResourceValidator: Sendable, Codable, Equatable {
    case entityTag(String)
    case lastModified(String)

    /// The validator of a response, preferring a strong ETag; nil when it has neither.
    package init?(headers: HTTPHeaderList) {
        if let tag = headers.first("etag").map({ String(Substring($0).trimmingSpaces()) }), Self.isStrong(tag) {
            self = .entityTag(tag)
        } else if let date = headers.first("last-modified").map({ String(Substring($0).trimmingSpaces()) }),
            !date.isEmpty
        {
            self = .lastModified(date)
        } else {
            return nil
        }
    }

    /// The `If-Range` value of a request for the rest of this version.
    package var ifRange: String {
        switch self {
        case .entityTag(let tag): tag
        case .lastModified(let date): date
        }
    }

    /// Whether `headers` (of a 206) describe the same version. An answer that leaves the field
    /// out is taken at its word: it honoured the If-Range, which only the same version may.
    package func matches(_ headers: HTTPHeaderList) -> Bool {
        switch self {
        case .entityTag(let tag):
            guard let other = headers.first("etag") else { return true }
            return Substring(other).trimmingSpaces() == Substring(tag)
        case .lastModified(let date):
            guard let other = headers.first("last-modified") else { return true }
            return Substring(other).trimmingSpaces() == Substring(date)
        }
    }

    /// `"…"`: an opaque tag in quotes, without the weakness prefix.
    private static func isStrong(_ tag: String) -> Bool {
        tag.utf8.count >= 2 && tag.hasPrefix("\"") && tag.hasSuffix("\"")
    }
}
