import AFProxyModel
import AFProxyRules

/// The configuration's throttle keys, read into default rules:
///
///     throttle-global = RATE [down|up]
///     throttle-host   = PATTERN RATE [down|up]     (repeatable)
///
/// Without a direction the rate applies to each direction; a second line for the same scope sets
/// the direction it names and keeps the other.
enum ThrottleDefaults {
    static func add(_ value: String, host: Bool, to rules: inout [ThrottleRule]) throws(ConfigurationError) {
        var words = value.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
        let shape = host ? "PATTERN RATE [down|up]" : "RATE [down|up]"
        var directions: Set<ThrottleDirection> = [.down, .up]
        if let last = words.last, let direction = ThrottleDirection(rawValue: last.lowercased()) {
            directions = [direction]
            words.removeLast()
        }
        guard words.count == (host ? 2 : 1) else { throw ConfigurationError("expected \(shape), not \(value)") }
        let scope: ThrottleScope
        if host {
            do {
                scope = .host(try HostPattern(words[0]))
            } catch {
                throw ConfigurationError(error.message)
            }
        } else {
            scope = .global
        }
        let rate: ByteRate
        do {
            rate = try ByteRate(parsing: words.last!)
        } catch {
            throw ConfigurationError(error.message)
        }
        var set = ThrottleRuleSet(runtime: rules)
        set.set(scope, rate: rate, directions: directions)
        rules = set.rules
    }
}
