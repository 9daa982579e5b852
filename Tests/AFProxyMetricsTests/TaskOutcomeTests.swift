import AFProxyMetrics
import AFProxyModel
import Testing

@Suite struct TaskOutcomeTests {
    @Test func successOrTheFailureCode() {
        #expect(TaskOutcome.label(errorCode: nil, error: nil) == "success")
        #expect(TaskOutcome.label(errorCode: "connection-refused", error: "refused") == "connection-refused")
        #expect(TaskOutcome.label(errorCode: "canceled", error: "canceled") == "canceled")
    }

    /// The label's values are a closed set: anything else falls back to one of them.
    @Test func neverAddsAValue() {
        #expect(TaskOutcome.label(errorCode: "made-up", error: "x") == "internal-error")
        #expect(TaskOutcome.label(errorCode: nil, error: "no code") == "internal-error")
        #expect(TaskOutcome.all.count == TaskFailure.allCodes.count + 1)
        #expect(Set(TaskOutcome.all).count == TaskOutcome.all.count)
    }
}
