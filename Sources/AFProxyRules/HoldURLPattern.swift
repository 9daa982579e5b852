import AFProxyModel

/// The `--url REGEX` condition of a hold rule: Swift's `Regex`, found anywhere in the task's URL
/// (`contains`, as `grep` finds a line), compiled once when the rule is added so a bad pattern is
/// refused there and then, never at the first request.
///
/// Its cost is bounded: the URL it searches is at most the listener's header limit long, the
/// pattern at most `maxLength`, and a repetition of a group that itself repeats (`(a+)+`, the
/// form that makes a backtracking engine take exponential time) is refused, since the search
/// runs on the client connection's event loop for every new task while the rule exists.
package struct HoldURLPattern: @unchecked Sendable, CustomStringConvertible {
    // @unchecked: `Regex` is a value type whose program is immutable once compiled; it is only
    // read here.
    package let text: String
    private let regex: Regex<AnyRegexOutput>

    package static let maxLength = 512

    package init(_ text: String) throws(HoldRuleError) {
        guard !text.isEmpty else { throw HoldRuleError("url: the regular expression is empty") }
        guard text.utf8.count <= Self.maxLength else {
            throw HoldRuleError("url: the regular expression is longer than \(Self.maxLength) bytes")
        }
        if let position = Self.nestedRepetition(in: text) {
            throw HoldRuleError(
                "url: a repeated group that itself repeats (at offset \(position)) can take exponential time; "
                    + "write it without the nesting")
        }
        do {
            self.regex = try Regex(text)
        } catch {
            throw HoldRuleError("url: not a valid regular expression: \(String(describing: error).prefix(200))")
        }
        self.text = text
    }

    package func matches(_ url: String) -> Bool {
        url.contains(self.regex)
    }

    package var description: String { self.text }

    /// The offset of the first `(…+…)+`, `(…*…)*` or `(…{n,m}…){n,m}`-like construct, nil when
    /// there is none. Escapes and character classes are skipped; a lazy or possessive suffix does
    /// not make the nesting safe, so it is refused all the same.
    package static func nestedRepetition(in text: String) -> Int? {
        let bytes = Array(text.utf8)
        /// Per open group: whether a repetition occurs inside it.
        var groups: [Bool] = []
        var index = 0
        var inClass = false
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\\") {
                index += 2
                continue
            }
            if inClass {
                if byte == UInt8(ascii: "]") { inClass = false }
                index += 1
                continue
            }
            switch byte {
            case UInt8(ascii: "["):
                inClass = true
            case UInt8(ascii: "("):
                groups.append(false)
            case UInt8(ascii: ")"):
                let repeatsInside = groups.popLast() ?? false
                let next = index + 1 < bytes.count ? bytes[index + 1] : 0
                let repeated = next == UInt8(ascii: "*") || next == UInt8(ascii: "+") || next == UInt8(ascii: "{")
                if repeatsInside && repeated { return index + 1 }
                if (repeatsInside || repeated) && !groups.isEmpty { groups[groups.count - 1] = true }
            case UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "{"):
                if !groups.isEmpty { groups[groups.count - 1] = true }
            default:
                break
            }
            index += 1
        }
        return nil
    }
}

extension HoldURLPattern: Equatable {
    package static func == (lhs: Self, rhs: Self) -> Bool { lhs.text == rhs.text }
}
