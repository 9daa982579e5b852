import AFProxyModel
import Logging

extension TaskLog {
    /// A quick request can complete before the lookup of its client's process ended; by the time
    /// its entry is written (`batchDelay` later at least) the history record usually has it. Only
    /// for a loopback client: a remote one never gets a process.
    func addLateClientProcess(to record: inout TaskRecord) {
        guard record.clientProcess == nil, record.kind != .download, Self.isLoopback(client: record.client) else {
            return
        }
        record.clientProcess = self.manager.clientProcess(ofCompleted: record.id)
    }

    /// `127.0.0.1:5` or `[::1]:5` (`EndpointText`).
    static func isLoopback(client: String) -> Bool {
        if client.hasPrefix("[") {
            guard let close = client.firstIndex(of: "]") else { return false }
            let host = client[client.index(after: client.startIndex)..<close]
            return host == "::1" || host.hasPrefix("::ffff:127.")
        }
        return client.hasPrefix("127.")
    }

    /// The client process's journal fields, those that are known.
    static func addClientProcess(_ process: ClientProcess, to metadata: inout Logger.Metadata) {
        if let pid = process.pid { metadata["client_pid"] = "\(pid)" }
        if let executable = process.executable { metadata["client_exe"] = "\(executable)" }
        if let unit = process.unit { metadata["client_unit"] = "\(unit)" }
        if let user = process.user { metadata["client_user"] = "\(user)" }
        if let uid = process.uid { metadata["client_uid"] = "\(uid)" }
    }
}
