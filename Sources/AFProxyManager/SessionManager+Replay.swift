import AFProxyModel
import FoundationEssentials
import NIOCore

extension SessionManager {
    /// Sends a finished HTTP task's request again as a new task (`replayOf` names the first),
    /// through the same rules as any request: its method, URL and the fields it sent, and its
    /// body when a record rule kept it whole. Refused, with the reason, for a task that is still
    /// running, a tunnel or a download, and a request with a body that was not kept (or kept
    /// cut): sending it without would be another request, unless `edit` gives the body. `edit`
    /// changes the request as an edit at a hold would (the new task's `edits` list it). Reads the
    /// body's file: call it off the event loops.
    package func replay(id: Int, edit: RequestEdit? = nil) throws(ManagerError) -> TaskRecord {
        guard let original = self.task(id: id) else { throw .unknownTask(id) }
        guard original.kind == .data || original.kind == .upload else {
            throw .invalid("task \(id) is a \(original.kind.rawValue) task: only HTTP requests are replayed")
        }
        guard original.state == .completed else {
            throw .invalid("task \(id) is still \(original.state.rawValue): replay it once it completed")
        }
        var body: ByteBuffer?
        if original.kind == .upload, edit?.body == nil {
            guard let kept = original.bodies?.request, !kept.cut,
                let bytes = try? self.bodies?.contents(task: id, side: .request)
            else {
                throw .invalid(
                    "task \(id)'s request body was not recorded whole, and a replay without it would be another "
                        + "request: record it first (afproxyctl record HOST), then make the request again")
            }
            body = ByteBuffer(bytes: bytes)
        }
        var request = ProxyRequest(
            method: original.method, url: original.url, headers: original.requestHeaders,
            body: body.map { .length(Int64($0.readableBytes)) } ?? .none, client: "afproxy replay",
            proxyUser: original.proxyUser)
        request.replayOf = id
        var edits: [TaskEdit] = []
        if let edit {
            do throws(RequestEdit.Refusal) {
                (request, edits) = try edit.applied(to: request)
            } catch {
                throw .invalid(error.message)
            }
            if let replaced = edit.body { body = replaced.isEmpty ? nil : ByteBuffer(bytes: replaced) }
        }
        let client = ReplayClient(body: body, eventLoop: self.timers?.next())
        let task = self.startTask(request, client: client, edits: edits)
        client.start(task)
        return task.record()
    }
}
