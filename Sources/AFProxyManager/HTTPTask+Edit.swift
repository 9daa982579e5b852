import AFProxyModel
import AFProxyTransport
import NIOCore

/// A held request changed before it goes upstream, or answered in the origin's place: the verbs
/// a person uses at a request hold (`afproxyctl edit`, `respond`). Any thread, as the other verbs.
extension HTTPTask {
    /// Applies `edit` to the held request: the transfer, not started yet, is made again for the
    /// edited request (the same throttle, the destination rules in force now), so what goes
    /// upstream at the release is the edited request. Throws the refusal of a wrong edit, or
    /// `IllegalTransition` when the task is not held at its start.
    func edit(_ edit: RequestEdit) throws(ManagerError) {
        // Under the machine's lock: a release waits until the new transfer is in place.
        let outcome: Result<Void, ManagerError> = self.machine.withLock { machine in
            do throws(IllegalTransition) {
                try machine.mayEdit("edit")
            } catch {
                return .failure(.illegal(error, task: self.id))
            }
            let request: ProxyRequest
            let changes: [TaskEdit]
            do throws(RequestEdit.Refusal) {
                (request, changes) = try edit.applied(to: self.request)
            } catch {
                return .failure(.invalid(error.message))
            }
            var next = self.transfer.request
            next.request = request
            next.destinations = self.context.destinations()
            self.replaceTransfer(self.context.transport.makeTransfer(next, delegate: self))
            let body = edit.body.map { ByteBuffer(bytes: $0) }
            machine.requestEdited(
                continuation: TransparentResume(
                    method: request.method, headers: request.headers, limit: self.context.transparentResumeLimit),
                body: body)
            // What goes upstream is what is kept (a rule that records requests made the recorder).
            if let body { self.requestRecorder?.replace(with: body) }
            self.requestNow.withLock { $0 = request }
            self.recorded.withLock { $0.edits += changes }
            return .success(())
        }
        try outcome.get()
        self.context.events.publish(.edited, self.record())
    }

    /// Answers the held request with `answer` without contacting the origin: the task completes
    /// with it. An unread request body is never read: the client's connection closes after it.
    func respond(_ answer: ProxyAnswer) throws(ManagerError) {
        let action: HTTPTaskStateMachine.Action
        do {
            action = try self.machine.withLock { machine throws(IllegalTransition) in
                let action = try machine.answer()
                self.recorded.withLock {
                    $0.answer = answer
                    $0.edits.append(TaskEdit(.response, "answered by afproxy: \(answer.head.status)"))
                }
                return action
            }
        } catch {
            throw .illegal(error, task: self.id)
        }
        self.perform(action)
    }

    /// A map-local rule's file (or why it cannot answer) is ready: the task completes with it.
    func answerLocally(_ answer: ProxyAnswer) {
        let action = self.machine.withLock { machine in
            let action = machine.answerLocally()
            if action != .none { self.recorded.withLock { $0.answer = answer } }
            return action
        }
        self.perform(action)
    }

    /// Changes the response held at its head: status and fields, which the client gets at the
    /// release; with a body, the edited head and that body answer the client in place of the
    /// origin's response, whose transfer is ended.
    func editResponse(_ edit: ResponseEdit) throws(ManagerError) {
        let outcome: Result<HTTPTaskStateMachine.Action, ManagerError> = self.machine.withLock { machine in
            do throws(IllegalTransition) {
                try machine.mayEditResponse()
            } catch {
                return .failure(.illegal(error, task: self.id))
            }
            guard let held = self.recorded.withLock({ $0.responseHead }) else {
                return .failure(.invalid("task \(self.id) has no response head to edit"))
            }
            let head: ProxyResponseHead
            let changes: [TaskEdit]
            var answer: ProxyAnswer?
            do throws(RequestEdit.Refusal) {
                (head, changes) = try edit.applied(to: held)
                if let body = edit.body { answer = try ResponseEdit.answer(head, body: body) }
            } catch {
                return .failure(.invalid(error.message))
            }
            var action = HTTPTaskStateMachine.Action.none
            if let answer {
                do throws(IllegalTransition) {
                    action = try machine.answer()
                } catch {
                    return .failure(.illegal(error, task: self.id))
                }
                self.recorded.withLock {
                    $0.answer = answer
                    $0.edits += changes + [TaskEdit(.response, "body replaced (\(answer.body.count) bytes)")]
                }
            } else {
                self.recorded.withLock {
                    $0.responseHead = head
                    $0.edits += changes
                }
            }
            return .success(action)
        }
        let action = try outcome.get()
        self.context.events.publish(.edited, self.record())
        self.perform(action)
    }
}
