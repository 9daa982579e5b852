import AFProxyAPI
import ArgumentParser

/// What `throttle` and `unthrottle` were asked, checked before anything is sent: which rule
/// (a task id, `--host PATTERN` or `--global`), the rate, and the directions (`--down`, `--up`;
/// neither: both).
struct ThrottleArguments: Equatable {
    enum Action: Equatable {
        case list
        case set(ThrottleScope, ByteRate, Set<ThrottleDirection>)
        case remove(ThrottleScope, Set<ThrottleDirection>)
    }

    static func parse(
        _ values: [String], host: String?, global: Bool, down: Bool, up: Bool, list: Bool, removing: Bool
    ) throws(ValidationError) -> Action {
        let usage =
            removing
            ? "unthrottle ID | --host PATTERN | --global"
            : "throttle ID RATE | --host PATTERN RATE | --global RATE | --list"
        if list {
            guard !removing, values.isEmpty, host == nil, !global else {
                throw ValidationError("--list takes no rule or rate")
            }
            return .list
        }
        if !removing && values.isEmpty && host == nil && !global { return .list }
        var values = values
        let scope: ThrottleScope
        switch (host, global) {
        case (.some, true):
            throw ValidationError("give --host or --global, not both")
        case (.some(let text), false):
            do {
                scope = .host(try HostPattern(text))
            } catch {
                throw ValidationError("--host: \(error.message)")
            }
        case (nil, true):
            scope = .global
        case (nil, false):
            guard let first = values.first, let id = Int(first), id > 0 else {
                throw ValidationError("expected a task id, --host PATTERN or --global: \(usage)")
            }
            values.removeFirst()
            scope = .task(id)
        }
        let directions: Set<ThrottleDirection> = down == up ? [.down, .up] : (down ? [.down] : [.up])
        if removing {
            guard values.isEmpty else { throw ValidationError("unexpected \(values[0]): \(usage)") }
            return .remove(scope, directions)
        }
        guard values.count == 1 else {
            throw ValidationError(
                values.isEmpty ? "missing the rate (500K, 2M, 1.5MiB): \(usage)" : "unexpected \(values[1]): \(usage)")
        }
        do {
            return .set(scope, try ByteRate(parsing: values[0]), directions)
        } catch {
            throw ValidationError(error.message)
        }
    }

    /// The API path of a rule.
    static func path(_ scope: ThrottleScope) -> String {
        switch scope {
        case .global: "/v1/throttle/global"
        case .task(let id): "/v1/throttle/tasks/\(id)"
        case .host(let pattern): "/v1/throttle/hosts/\(Pin.escaped(pattern.description))"
        }
    }
}
