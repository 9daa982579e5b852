import AFProxyModel

extension SessionManager {
    /// Changes a held request before it goes upstream (`PATCH /v1/tasks/{id}/request`): 404 for
    /// no such task, 409 for one that is not held at its start (running, completed, suspended by a
    /// person, a tunnel or a download), the refusal of a wrong edit. It stays held: `resume` sends it.
    package func edit(id: Int, _ edit: RequestEdit) throws(ManagerError) -> TaskRecord {
        let task = try self.heldRequest(id, verb: "edit")
        try task.edit(edit)
        return task.record()
    }

    /// Answers a held request in the origin's place (`POST /v1/tasks/{id}/respond`): the origin
    /// is never contacted, and the task completes with `answer`.
    package func respond(id: Int, _ answer: ProxyAnswer) throws(ManagerError) -> TaskRecord {
        let task = try self.heldRequest(id, verb: "respond to")
        try task.respond(answer)
        return task.record()
    }

    /// Changes a response held at its head (`PATCH /v1/tasks/{id}/response`): 409 for a task
    /// that is not held there. With a body it answers the client in the origin's place.
    package func editResponse(id: Int, _ edit: ResponseEdit) throws(ManagerError) -> TaskRecord {
        let task = try self.heldRequest(id, verb: "edit the response of")
        try task.editResponse(edit)
        return task.record()
    }

    private func heldRequest(_ id: Int, verb: String) throws(ManagerError) -> HTTPTask {
        let (live, recorded) = self.registry.find(id: id)
        guard let live else {
            guard let recorded else { throw .unknownTask(id) }
            throw .illegal(IllegalTransition(verb: verb, state: recorded.state), task: id)
        }
        guard let task = live as? HTTPTask else {
            throw .illegal(
                IllegalTransition(
                    verb: verb, state: live.state,
                    reason: "it is a \(live.kind.rawValue) task: only an HTTP request held at its start can be changed"),
                task: id)
        }
        return task
    }
}
