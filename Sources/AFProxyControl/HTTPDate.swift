#if canImport(Glibc)
import Glibc
#endif

/// The `Date` header's value (RFC 9110 §6.6.1) as an IMF-fixdate, `Sun, 06 Nov 1994 08:49:37 GMT`.
/// Names are spelled here rather than by strftime, whose `%a`/`%b` follow the locale.
enum HTTPDate {
    private static let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    static func now() -> String {
        Self.string(secondsSince1970: time(nil))
    }

    static func string(secondsSince1970 seconds: time_t) -> String {
        var time = seconds
        var parts = tm()
        gmtime_r(&time, &parts)
        return "\(Self.days[Int(parts.tm_wday)]), \(Self.twoDigits(parts.tm_mday)) \(Self.months[Int(parts.tm_mon)]) "
            + "\(parts.tm_year + 1900) \(Self.twoDigits(parts.tm_hour)):\(Self.twoDigits(parts.tm_min)):"
            + "\(Self.twoDigits(parts.tm_sec)) GMT"
    }

    private static func twoDigits(_ value: Int32) -> String {
        value < 10 ? "0\(value)" : "\(value)"
    }
}
