/// The figures of `GET /v1/stats`: live tasks by state and kind, totals served, bytes both ways.
public struct SessionStats: Sendable, Codable, Equatable {
    public var version = AFProxyVersion.current
    public var live = 0
    public var byState: [String: Int] = [:]
    public var byKind: [String: Int] = [:]
    /// Tasks completed since start, and how many of them with an error.
    public var served = 0
    public var failed = 0
    /// Completed records kept for `list --all`.
    public var history = 0
    public var bytesUp: Int64 = 0
    public var bytesDown: Int64 = 0
    public var uptimeSeconds: Double = 0
    public var openConnections = 0

    public init() {}
}

public enum AFProxyVersion {
    public static let current = "0.1.0"
}
