import AFProxyModel
import AFProxyRules
import AFProxyStore

extension SessionManager {
    /// Answers `task` from the file a map-local rule named, read on the I/O executor: the file
    /// with a content type from its name, or 404/403/500 with the reason when it cannot be.
    func answer(_ task: HTTPTask, from plan: MapLocalPlan) {
        guard let file = plan.file else {
            return task.answerLocally(
                Self.refusal(403, "afproxy: map-local rule \(plan.rule): the path leaves the rule's directory"))
        }
        self.localFiles.load(file, as: plan.readAs) { result in
            switch result {
            case .success(let bytes):
                let answer = try? ProxyAnswer(
                    status: 200, headers: [HTTPHeaderField("Content-Type", MediaType.forFile(named: file))],
                    body: bytes)
                task.answerLocally(answer ?? Self.refusal(500, "afproxy: map-local rule \(plan.rule): no answer"))
            case .failure(.notFound(let reason)):
                task.answerLocally(Self.refusal(404, "afproxy: map-local rule \(plan.rule): \(reason)"))
            case .failure(.forbidden(let reason)):
                task.answerLocally(Self.refusal(403, "afproxy: map-local rule \(plan.rule): \(reason)"))
            case .failure(.tooLarge(let reason)), .failure(.unreadable(let reason)):
                task.answerLocally(Self.refusal(500, "afproxy: map-local rule \(plan.rule): \(reason)"))
            }
        }
    }

    private static func refusal(_ status: Int, _ message: String) -> ProxyAnswer {
        // A status in range and fields of our own: the answer cannot be refused.
        try! ProxyAnswer(
            status: status, headers: [HTTPHeaderField("Content-Type", "text/plain; charset=utf-8")],
            body: Array((message + "\n").utf8))
    }
}
