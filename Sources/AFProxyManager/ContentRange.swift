import AFProxyModel

/// A `Content-Range` of a 206 answer for one range (RFC 9110 §14.4): `bytes FIRST-LAST/LENGTH`,
/// the length `*` when the origin does not know it. The other forms (an unsatisfied-range
/// `bytes */LENGTH`, other units) are not a body a download can append.
package struct ContentRange: Sendable, Equatable {
    package var first: Int64
    package var last: Int64
    package var completeLength: Int64?

    package init(first: Int64, last: Int64, completeLength: Int64?) {
        self.first = first
        self.last = last
        self.completeLength = completeLength
    }

    package init?(_ text: String) {
        var view = Substring(text).trimmingSpaces()
        guard view.lowercased().hasPrefix("bytes ") else { return nil }
        view = view.dropFirst(6).trimmingSpaces()
        guard let slash = view.firstIndex(of: "/"), let dash = view[..<slash].firstIndex(of: "-"),
            let first = Self.number(view[..<dash]), let last = Self.number(view[view.index(after: dash)..<slash]),
            first <= last
        else { return nil }
        let length = view[view.index(after: slash)...]
        var completeLength: Int64? = nil
        if length != "*" {
            guard let value = Self.number(length), last < value else { return nil }
            completeLength = value
        }
        self.init(first: first, last: last, completeLength: completeLength)
    }

    /// Digits only: `+5`, `-1` and spaces inside are not a position.
    private static func number(_ text: Substring) -> Int64? {
        guard !text.isEmpty, text.utf8.count <= 18, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
            return nil
        }
        return Int64(text)
    }
}
