#if canImport(Glibc)
import Glibc
#endif

/// The IMF-fixdate of RFC 9110 §5.6.7 (`Sun, 06 Nov 1994 08:49:37 GMT`), for the `Date` field of
/// the answers afproxy gives itself (400, 403, 408, 431, 502, 503, 504, the CONNECT 200): a
/// sender with a clock must send one (§6.6.1). Formatted by hand rather than with `strftime`,
/// whose day and month names follow the locale; Foundation's `Date.HTTPFormatStyle` is not in
/// the Swift 6.3 toolchain's Foundation on Linux (checked: `Date` has no such member there).
package enum HTTPDate {
    private static let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    package static func now() -> String {
        self.format(secondsSince1970: time(nil))
    }

    package static func format(secondsSince1970 seconds: Int) -> String {
        var value = time_t(seconds)
        var parts = tm()
        gmtime_r(&value, &parts)
        func two(_ number: Int32) -> String { number < 10 ? "0\(number)" : "\(number)" }
        return "\(Self.days[Int(parts.tm_wday)]), \(two(parts.tm_mday)) \(Self.months[Int(parts.tm_mon)]) "
            + "\(parts.tm_year + 1900) \(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
    }

    /// Seconds since 1970 of an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), the only form a
    /// sender may generate (§5.6.7); nil for anything else.
    package static func parse(_ text: String) -> Int? {
        let parts = text.split(separator: " ", omittingEmptySubsequences: false)
        guard parts.count == 6, parts[0].count == 4, parts[0].hasSuffix(","), parts[5] == "GMT",
            let day = Int(parts[1]), parts[1].count == 2, (1...31).contains(day),
            let month = Self.months.firstIndex(of: String(parts[2])),
            let year = Int(parts[3]), parts[3].count == 4
        else { return nil }
        let clock = parts[4].split(separator: ":", omittingEmptySubsequences: false)
        guard clock.count == 3, clock.allSatisfy({ $0.count == 2 }),
            let hour = Int(clock[0]), let minute = Int(clock[1]), let second = Int(clock[2]),
            hour < 24, minute < 60, second <= 60
        else { return nil }
        var fields = tm()
        fields.tm_year = Int32(year - 1900)
        fields.tm_mon = Int32(month)
        fields.tm_mday = Int32(day)
        fields.tm_hour = Int32(hour)
        fields.tm_min = Int32(minute)
        fields.tm_sec = Int32(second)
        return Int(timegm(&fields))
    }
}
