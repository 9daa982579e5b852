import AFProxyAPI
import ArgumentParser

#if canImport(Glibc)
import Glibc
#endif

/// Completes a task id argument (`afproxyctl suspend <TAB>`) from the daemon's live tasks. The
/// shell runs afproxyctl again for it on every TAB, so it answers at once and says nothing when
/// no daemon runs: an empty list, never an error on the terminal the user is typing in.
enum TaskIDCompletion {
    static let kind = CompletionKind.custom { words, _, prefix in
        Self.ids(socket: Self.socketFlag(in: words)).filter { $0.hasPrefix(prefix) }
    }

    /// The live tasks' ids, oldest first; none when the daemon cannot be asked.
    static func ids(socket: String?) -> [String] {
        let path = ControlSocketPath.resolveForClient(
            flag: socket, environment: ProcessEnvironment.current(), uid: getuid(), exists: { access($0, F_OK) == 0 })
        guard let response = try? ControlClient(socketPath: path).request("GET", "/v1/tasks"),
            response.status == 200,
            let rows = try? TaskRow.list(fromJSON: response.body)
        else { return [] }
        return rows.map { String($0.id) }
    }

    /// `--socket PATH` or `--socket=PATH` on the line being completed, so that the ids come
    /// from the daemon the command will talk to.
    static func socketFlag(in words: [String]) -> String? {
        for (index, word) in words.enumerated() {
            if word.hasPrefix("--socket=") { return String(word.dropFirst("--socket=".count)) }
            if word == "--socket", index + 1 < words.count { return words[index + 1] }
        }
        return nil
    }
}
