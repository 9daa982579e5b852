#if canImport(Glibc)
import Glibc
#endif

/// Faults a test switches on in the real daemon through `AFPROXY_FAILPOINTS` (comma-separated
/// names), to prove that what guards against a defect works when the defect is there. Read once;
/// off unless named, and nothing a user would set: docs/how-it-works.md names the one the tests use.
enum Failpoints {
    /// `client-close-ignored`: a client's close is noted but does not end its task (a gap in the
    /// rule at `HTTPTaskStateMachine`): the safety net must end it (`stalled`).
    static let clientCloseIgnored = Self.named.contains("client-close-ignored")

    /// `refused-continuation-runs-on`: the transfer of a transparent resume's continuation that
    /// is not the rest is not stopped, so it completes, as it does when the origin's whole answer
    /// arrives before the cancel reaches curl: the task must still end as broken.
    static let refusedContinuationRunsOn = Self.named.contains("refused-continuation-runs-on")

    /// `disk-stall`: a download's write blocks while a file named `afproxy-disk-stall` exists in
    /// the directory of its partial file, as a write to a disk that stopped answering does: only
    /// that download may wait for it.
    static let diskStall = Self.named.contains("disk-stall")

    /// Blocks the calling thread while the `disk-stall` file is beside `partialPath` (the failpoint on).
    static func waitOutDiskStall(beside partialPath: String) {
        guard Self.diskStall else { return }
        let directory = partialPath.lastIndex(of: "/").map { String(partialPath[..<$0]) } ?? "."
        let marker = directory + "/afproxy-disk-stall"
        while access(marker, F_OK) == 0 { usleep(20_000) }
    }

    private static let named: Set<Substring> = {
        guard let value = getenv("AFPROXY_FAILPOINTS") else { return [] }
        return Set(String(cString: value).split(separator: ","))
    }()
}
