#if canImport(Glibc)
import Glibc
#endif

/// A child started with `posix_spawn(3)`: the path and arguments, stdio inherited, some
/// descriptors placed at fixed numbers, and the signals afproxyctl ignores or catches put back
/// to their defaults in the child (an ignored SIGINT would otherwise stay ignored across exec,
/// and Ctrl-C would no longer reach the command). Foundation's `Process` closes every
/// descriptor beyond stdio and gives no say over signal dispositions.
struct ChildProcess {
    let pid: pid_t

    /// Starts `path` with `arguments` (`arguments[0]` included); `descriptors` maps a descriptor
    /// of afproxyctl's to the number the child gets it as; `stdin`, when given, replaces the
    /// child's standard input.
    static func spawn(
        _ path: String, _ arguments: [String], descriptors: [(Int32, Int32)] = [], stdin: Int32? = nil
    ) -> Result<ChildProcess, SpawnFailure> {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if let stdin { posix_spawn_file_actions_adddup2(&actions, stdin, 0) }
        for (from, to) in descriptors { posix_spawn_file_actions_adddup2(&actions, from, to) }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGINT, SIGQUIT, SIGTERM, SIGHUP, SIGPIPE] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        var unblocked = sigset_t()
        sigemptyset(&unblocked)
        posix_spawnattr_setsigmask(&attributes, &unblocked)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, path, &actions, &attributes, &argv, environ)
        guard rc == 0 else { return .failure(SpawnFailure(path: path, code: rc)) }
        return .success(ChildProcess(pid: pid))
    }

    /// Waits for the child to end: its exit status, or 128 + the signal that ended it (as a
    /// shell reports it).
    func wait() -> Int32 {
        var status: Int32 = 0
        while waitpid(self.pid, &status, 0) < 0 {
            if errno != EINTR { return 1 }
        }
        let signal = status & 0x7F
        return signal == 0 ? (status >> 8) & 0xFF : 128 + signal
    }

    struct SpawnFailure: Error, CustomStringConvertible {
        var path: String
        var code: Int32
        var description: String { "cannot start \(self.path): \(String(cString: strerror(self.code)))" }
    }
}
