import AFProxyManager
import AFProxyModel
import NIOCore
import NIOHTTP1
import Testing

@testable import AFProxyControl

/// The manager's refusals meet HTTP in one place: each cause answers the status the control API
/// documents for it, with the manager's words as the error.
@Suite struct ManagerErrorStatusTests {
    @Test func eachCauseAnswersItsStatus() {
        let transition = IllegalTransition(verb: "resume", state: .completed)
        let cases: [(ManagerError, HTTPResponseStatus, String)] = [
            (.unknownTask(7), .notFound, "no task with id 7"),
            (.illegal(transition, task: 7), .conflict, "task 7: \(transition)"),
            (.completed(task: 7), .conflict, "task 7 has completed"),
            (.pathTaken("x.bin exists (--force replaces it)"), .conflict, "x.bin exists (--force replaces it)"),
            (.invalid("sha256 must be 64 hexadecimal digits"), .badRequest, "sha256 must be 64 hexadecimal digits"),
        ]
        for (error, status, message) in cases {
            #expect(error.status == status, "\(error.code)")
            #expect(error.message == message)
            guard case .body(let answered, _, let body) = ControlAnswer.refusal(error) else {
                Issue.record("\(error.code): not a body")
                continue
            }
            #expect(answered == status && String(buffer: body).contains(message), "\(error.code)")
        }
        #expect(Set(cases.map(\.0.code)).count == cases.count)
    }
}
