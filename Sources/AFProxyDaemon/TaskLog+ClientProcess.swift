import AFProxyModel
import Logging

extension TaskLog {
    /// The client process's journal fields, those that are known.
    static func addClientProcess(_ process: ClientProcess, to metadata: inout Logger.Metadata) {
        if let pid = process.pid { metadata["client_pid"] = "\(pid)" }
        if let executable = process.executable { metadata["client_exe"] = "\(executable)" }
        if let unit = process.unit { metadata["client_unit"] = "\(unit)" }
        if let user = process.user { metadata["client_user"] = "\(user)" }
        if let uid = process.uid { metadata["client_uid"] = "\(uid)" }
    }
}
