import AFProxyModel

/// What a throttle rule applies to: one task, the tasks whose host a pattern names, or all.
package enum ThrottleScope: Sendable, Hashable, CustomStringConvertible {
    case task(Int)
    case host(HostPattern)
    case global

    /// How `show`, `list` and the JSON name the rule: `task 42`, `host *.example.org`, `global`.
    package var description: String {
        switch self {
        case .task(let id): "task \(id)"
        case .host(let pattern): "host \(pattern)"
        case .global: "global"
        }
    }

    /// The scope's name in the API (`"scope"`).
    package var kind: String {
        switch self {
        case .task: "task"
        case .host: "host"
        case .global: "global"
        }
    }
}

/// The two directions a rule limits separately: response bytes (and a tunnel's bytes from the
/// origin), and request bodies (a tunnel's bytes from the client).
package enum ThrottleDirection: String, Sendable, Hashable, CaseIterable {
    case down
    case up
}

/// One rule: a scope and its rate in each direction (nil: that direction is not limited by it).
package struct ThrottleRule: Sendable, Hashable {
    package var scope: ThrottleScope
    package var down: ByteRate?
    package var up: ByteRate?

    package init(scope: ThrottleScope, down: ByteRate? = nil, up: ByteRate? = nil) {
        self.scope = scope
        self.down = down
        self.up = up
    }

    package func rate(_ direction: ThrottleDirection) -> ByteRate? {
        direction == .down ? self.down : self.up
    }
}
