import AFProxyModel

#if canImport(Glibc)
import Glibc
#endif

/// Finds the process at the other end of a loopback connection: the client's socket in the
/// kernel's TCP table (its inode and owner), then the process holding that inode. Not thread-safe:
/// `ClientProcessLookup` calls it from one job at a time.
///
/// Scanning every process's descriptors is the costly part, so the processes found lately are
/// tried first (a program opens many connections), then the others newest first (a command just
/// started, like curl, may not live long), and what was read of a process is kept for a short
/// while rather than read again for each of its connections.
final class ClientProcessFinder {
    private let unit: (Int32) -> String?
    private let tableRoot: String
    /// Nil where netlink is not allowed: the tables in `/proc` are read instead.
    private let diag: SockDiagSocket?
    /// The daemon's own pid, never its own client: its descriptor table is the largest to scan.
    private let own: Int32
    /// Processes found lately, newest first.
    private var recent: [Int32] = []
    private var facts: [Int32: (process: ClientProcess, at: ContinuousClock.Instant)] = [:]

    static let recentCount = 16
    /// How long what was read of a process is used again; short, as a pid can be reused.
    static let factsLifetime: Duration = .seconds(2)

    /// - Parameters:
    ///   - unit: the systemd unit of a process (libsystemd's, injected by the daemon).
    ///   - tableRoot: where `tcp` and `tcp6` are: this process's network namespace's.
    ///   - skipsOwnProcess: false in tests, whose process is at both ends.
    ///   - asksTheKernel: false: the tables only (tests of that path).
    init(
        unit: @escaping (Int32) -> String?, tableRoot: String = "/proc/self/net", skipsOwnProcess: Bool = true,
        asksTheKernel: Bool = true
    ) {
        self.unit = unit
        self.own = skipsOwnProcess ? getpid() : -1
        self.diag = asksTheKernel ? SockDiagSocket() : nil
        self.tableRoot = tableRoot
    }

    func find(_ addresses: ConnectionAddresses) -> ClientProcess? {
        guard let socket = self.socket(of: addresses), socket.inode != 0 else { return nil }
        let holder = SocketHolderScan.holder(
            of: socket.inode, first: self.recent, pids: { ProcFS.pids().sorted(by: >) }, skipping: self.own)
        guard let pid = holder, let process = self.process(pid) else {
            // The socket's owner is known even when its process cannot be seen.
            return ClientProcess(user: ProcessFacts.userName(socket.uid), uid: socket.uid)
        }
        self.recent.removeAll { $0 == pid }
        self.recent.insert(pid, at: 0)
        if self.recent.count > Self.recentCount { self.recent.removeLast() }
        return process
    }

    /// The client's socket: asked of the kernel, or found in `tcp` for an IPv4 client (or in
    /// `tcp6`, mapped, for a dual-stack socket), in `tcp6` for an IPv6 one. When the kernel
    /// does not answer (no TCP diagnostics in it), the tables say whether there is such a socket.
    private func socket(of addresses: ConnectionAddresses) -> SocketTable.Entry? {
        let plain = addresses.unmapped
        if let found = self.diag?.socket(client: plain.peer, server: plain.local) {
            return SocketTable.Entry(local: plain.peer, remote: plain.local, uid: found.uid, inode: found.inode)
        }
        let tables = plain.peer.address.count == 4 ? ["tcp", "tcp6"] : ["tcp6"]
        for table in tables {
            guard let bytes = ProcFS.read("\(self.tableRoot)/\(table)") else { continue }
            if let entry = SocketTable.find(
                client: plain.peer, server: plain.local, in: String(decoding: bytes, as: UTF8.self))
            {
                return entry
            }
        }
        return nil
    }

    private func process(_ pid: Int32) -> ClientProcess? {
        let now = ContinuousClock.now
        if let cached = self.facts[pid], now - cached.at < Self.factsLifetime { return cached.process }
        guard let process = ProcessFacts.read(pid: pid, unit: self.unit) else { return nil }
        self.facts = self.facts.filter { now - $0.value.at < Self.factsLifetime }
        self.facts[pid] = (process, now)
        return process
    }
}
