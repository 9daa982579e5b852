import AFProxyModel

/// `Retry-After` (RFC 9110 §10.2.3): a number of seconds, or an HTTP-date.
package enum RetryAfter {
    /// The delay `value` asks for, seen at `now` (seconds since 1970); nil when it is neither
    /// form. A date in the past asks for no delay.
    package static func delay(_ value: String, now: Int) -> Duration? {
        let text = Substring(value).trimmingSpaces()
        if !text.isEmpty, text.utf8.count <= 9, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
            let seconds = Int(text)
        {
            return .seconds(seconds)
        }
        guard let date = HTTPDate.parse(String(text)) else { return nil }
        return .seconds(max(0, date - now))
    }
}
