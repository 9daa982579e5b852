#if canImport(Glibc)
import Glibc
#endif

/// Faults a test switches on in the real daemon through `AFPROXY_FAILPOINTS` (comma-separated
/// names), to prove that what guards against a defect works when the defect is there. Read once;
/// off unless named, and nothing a user would set: the README lists them under testing only.
enum Failpoints {
    /// `client-close-ignored`: a client's close is noted but does not end its task (a gap in the
    /// rule at `HTTPTaskStateMachine`): the safety net must end it (`stalled`).
    static let clientCloseIgnored = Self.named.contains("client-close-ignored")

    private static let named: Set<Substring> = {
        guard let value = getenv("AFPROXY_FAILPOINTS") else { return [] }
        return Set(String(cString: value).split(separator: ","))
    }()
}
