import AFProxyAPI
import AFProxyManager

extension TasksEndpoint {
    /// The WebSocket messages a record rule kept of a stream task, live or completed; 404 with
    /// the reason when there are none to list.
    func messages(_ id: Int) -> ControlAnswer {
        if let log = self.manager.messages(id: id) { return .json(.ok, MessageList(log)) }
        guard let record = self.manager.task(id: id) else { return .error(.notFound, "no task with id \(id)") }
        let why =
            record.kind != .stream || !(record.url.hasPrefix("ws://") || record.url.hasPrefix("wss://"))
            ? "it is not a WebSocket"
            : "no record rule named it when it started (afproxyctl record HOST), or its messages were let go "
                + "for newer ones"
        return .error(.notFound, "task \(id) has no recorded messages: \(why)")
    }
}
