extension Duration {
    /// Whole milliseconds, the fraction cut off: what curl's `_MS` options and `epoll_wait` take.
    var milliseconds: Int64 {
        let (seconds, attoseconds) = self.components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }
}
