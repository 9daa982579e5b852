/// What a person changes in a response held at its head (a hold rule with `response`) before the
/// client gets it (`afproxyctl edit --status`, `PATCH /v1/tasks/{id}/response`): the status and
/// fields, applied to the head by `applied(to:)`; a new body makes the edited head and that body
/// the proxy's answer in place of the origin's (`answer(from:)`).
package struct ResponseEdit: Sendable, Equatable {
    package var status: Int?
    package var setHeaders: HTTPHeaderList
    package var removeHeaders: [String]
    package var body: [UInt8]?

    package init(
        status: Int? = nil, setHeaders: HTTPHeaderList = [], removeHeaders: [String] = [], body: [UInt8]? = nil
    ) {
        self.status = status
        self.setHeaders = setHeaders
        self.removeHeaders = removeHeaders
        self.body = body
    }

    package var isEmpty: Bool {
        self.status == nil && self.setHeaders.isEmpty && self.removeHeaders.isEmpty && self.body == nil
    }

    /// `head` with the status and fields changed, and what changed. A status is changed only
    /// between statuses whose responses carry a body (not 1xx, 204, 304), since the body on its
    /// way is framed by the one it came with — unless the body is replaced too.
    package func applied(to head: ProxyResponseHead) throws(RequestEdit.Refusal) -> (ProxyResponseHead, [TaskEdit]) {
        var edited = head
        var changes: [TaskEdit] = []
        if let status = self.status, status != head.status {
            guard (200...599).contains(status) else {
                throw RequestEdit.Refusal(message: "the status \(status) is not a final HTTP status (200 to 599)")
            }
            let bodiless: Set<Int> = [204, 304]
            guard self.body != nil || (!bodiless.contains(status) && !bodiless.contains(head.status)) else {
                throw RequestEdit.Refusal(
                    message:
                        "a \(head.status) cannot become a \(status) with the origin's body: give the body too (--body)")
            }
            edited.status = status
            edited.reason = ProxyAnswer.reason(status)
            changes.append(TaskEdit(.response, "status \(head.status) → \(status)"))
        }
        changes += try RequestEdit.editFields(
            &edited.headers, set: self.setHeaders, remove: self.removeHeaders, side: .response)
        return (edited, changes)
    }

    /// The edited head with `body` as the proxy's whole answer: the origin's framing fields go,
    /// the answer is framed by its body.
    package static func answer(_ head: ProxyResponseHead, body: [UInt8]) throws(RequestEdit.Refusal) -> ProxyAnswer {
        try ProxyAnswer(
            status: head.status,
            headers: head.headers.filter { !RequestEdit.fixedFields.contains($0.name.lowercased()) },
            body: body)
    }
}
