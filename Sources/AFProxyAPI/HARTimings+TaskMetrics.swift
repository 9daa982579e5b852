import AFProxyModel

/// HAR's phases from curl's cumulative times (`TaskMetrics`: milliseconds from the start of the
/// transfer at which name lookup, TCP connect, TLS handshake and the first response byte were
/// done). Each phase runs from where the one before it ended to its own mark, so the phases laid
/// end to end reach exactly the end of the transfer, and `time` is their sum by construction.
/// The work is done in whole microseconds, curl's own unit, so no rounding creeps into the sum.
extension HARTimings {
    /// - Parameters:
    ///   - endMs: the end of the transfer (its `totalMs`) or, for a live task, how long it has run;
    ///     nil when not known (the phases then end at the last mark).
    ///   - failureCode: the task's `errorCode`: with no response byte, it says which phase the
    ///     transfer was in when it ended.
    ///   - queued: the task waits for its turn (`waiting`), so time with nothing measured is `blocked`.
    package init(metrics: TaskMetrics, endMs: Double?, failureCode: String? = nil, queued: Bool = false) {
        func microseconds(_ ms: Double?) -> Int64? {
            ms.map { max(0, Int64(($0 * 1000).rounded())) }
        }
        var phases = Phases()
        var cursor: Int64 = 0
        let reused = metrics.reusedConnection == true
        // A reused connection had no lookup, connect or handshake of its own: curl's marks for
        // them are only the moment it picked the connection, which goes to `wait` below.
        let dnsEnd = reused ? nil : microseconds(metrics.dnsMs)
        let tcpEnd = reused ? nil : microseconds(metrics.connectMs)
        let tlsEnd = reused || tcpEnd == nil ? nil : microseconds(metrics.tlsMs)
        if let dnsEnd {
            phases.dns = dnsEnd
            cursor = dnsEnd
        }
        // HAR's connect includes the handshake; ssl repeats the handshake alone.
        if let connected = tlsEnd ?? tcpEnd {
            phases.connect = max(0, connected - cursor)
            cursor = max(cursor, connected)
            if let tlsEnd, let tcpEnd { phases.ssl = min(phases.connect ?? 0, max(0, tlsEnd - tcpEnd)) }
        }
        let firstByte = microseconds(metrics.ttfbMs)
        let end = max(microseconds(endMs) ?? 0, firstByte ?? 0, cursor)
        if let firstByte {
            phases.wait = max(0, firstByte - cursor)
            phases.receive = end - max(cursor, firstByte)
        } else {
            let rest = end - cursor
            let tlsFailed = ["tls-failure", "tls-verify-failed", "tls-pin-mismatch"].contains(failureCode)
            let connectFailed =
                tlsFailed || ["connection-refused", "unreachable", "connect-timeout"].contains(failureCode)
            if tlsFailed, tcpEnd != nil, tlsEnd == nil {
                // Connected, and the handshake failed: its time is ssl, and so part of connect.
                phases.connect = (phases.connect ?? 0) + rest
                phases.ssl = rest
            } else if reused || tcpEnd != nil {
                phases.wait = rest
            } else if failureCode == "dns-failure" {
                phases.dns = (phases.dns ?? 0) + rest
            } else if connectFailed || dnsEnd != nil {
                phases.connect = rest
            } else if queued || failureCode != nil {
                phases.blocked = rest
            } else {
                // Running with nothing measured yet: curl's marks are read when the response head
                // comes, so the transfer may be anywhere before it; waiting for it is the likeliest.
                phases.wait = rest
            }
        }
        func ms(_ value: Int64?) -> Double { value.map { Double($0) / 1000 } ?? -1 }
        self.init(
            blocked: ms(phases.blocked), dns: ms(phases.dns), connect: ms(phases.connect), ssl: ms(phases.ssl),
            send: 0, wait: ms(phases.wait ?? 0), receive: ms(phases.receive ?? 0))
    }
}

/// The phases in microseconds while they are worked out; nil is a phase that did not happen.
private struct Phases {
    var blocked: Int64?
    var dns: Int64?
    var connect: Int64?
    var ssl: Int64?
    var wait: Int64?
    var receive: Int64?
}
