import AFProxyAPI
import ArgumentParser
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// `afproxyctl run -- COMMAND`: runs a command in a network namespace of its own whose only way
/// out is afproxy, so that every connection it makes is a task, with no proxy setting in it.
///
/// `unshare` makes a user and a network namespace and starts `afproxyctl capture-init` in them,
/// which sets the namespace up (`CaptureNamespace`) and sends back the sockets afproxy is to
/// own in there; this side hands them to the daemon over its capture socket (`SCM_RIGHTS`),
/// tells capture-init to go on, and it becomes the command (through a second user namespace,
/// so that the command runs as the caller's uid, without the rights to undo the capture). The
/// command's process is this process's child throughout: its status is this command's, and
/// Ctrl-C reaches it as it would without afproxy. The capture lasts while this process does.
struct Run: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run a command whose every connection goes through afproxy, with no proxy settings in it.",
        discussion: """
            The command runs in a network namespace of its own (a user namespace makes that possible \
            without root): its TCP connections are redirected to afproxy, which reads where each was \
            going, its DNS queries are answered by afproxy, other UDP is refused. Each connection becomes \
            tasks as a proxied one does, marked with the capture (list --capture NAME). Needs unshare \
            (util-linux), ip (iproute2) and nft (nftables). Exit status: the command's; 1 when the capture \
            could not be set up (the command did not start); 69 when the daemon is not reachable; 127 when \
            the command is not found.
            """)

    @ParentCommand var root: AFProxyCtl
    var global: GlobalOptions { self.root.global }

    @Option(help: ArgumentHelp("The capture's name in list and show (default: the command's).", valueName: "name"))
    var name: String?

    @Flag(help: "Intercept this command's TLS connections with the local CA, whatever the intercept rules say.")
    var intercept = false

    @Argument(
        parsing: .captureForPassthrough, help: ArgumentHelp("The command and its arguments.", valueName: "command"))
    var command: [String] = []

    mutating func validate() throws {
        if self.command.first == "--" { self.command.removeFirst() }
        guard !self.command.isEmpty else { throw ValidationError("name the command to run: afproxyctl run -- COMMAND") }
    }

    func run() throws {
        _ = try self.global.call("GET", "/v1/status")
        let capturePath = CaptureSocketPath.forControlSocket(self.global.client.socketPath)
        if let refusal = UserNamespaceCheck.refusal() { Self.fail(refusal) }
        guard let unshare = ToolPath.find("unshare") else {
            Self.fail("unshare (util-linux) is not installed; a capture needs it, and ip and nft")
        }
        for tool in ["ip", "nft"] where ToolPath.find(tool) == nil {
            Self.fail("\(tool) (\(tool == "ip" ? "iproute2" : "nftables")) is not installed; a capture needs it")
        }
        var pair: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0 else {
            Self.fail("socketpair: \(String(cString: strerror(errno)))")
        }
        let (mine, theirs) = (pair[0], pair[1])
        let arguments =
            [
                "unshare", "--user", "--map-root-user", "--net", "--", Self.ownExecutable(), "capture-init",
                "--uid", "\(getuid())", "--gid", "\(getgid())", "--",
            ] + self.command
        let child: ChildProcess
        switch ChildProcess.spawn(unshare, arguments, descriptors: [(theirs, CaptureInit.channel)]) {
        case .success(let started): child = started
        case .failure(let failure): Self.fail(failure.description)
        }
        close(theirs)
        // From here on the child is the command (or will be): its end is ours.
        RunSignals.forward(to: child.pid)
        let sockets: [Int32]
        switch DescriptorPassing.receive(mine, maxBytes: CaptureRegistration.maxMessage) {
        case .success(let message)
        where message.bytes == CaptureInit.ready
            && message.descriptors.count == CaptureRegistration.descriptorCount:
            sockets = message.descriptors
        case .success(let message) where !message.descriptors.isEmpty:
            for descriptor in message.descriptors { close(descriptor) }
            Self.abandon(
                child, mine,
                "capture-init sent \(message.descriptors.count) sockets, not \(CaptureRegistration.descriptorCount)")
        case .success(let message) where !message.bytes.isEmpty:
            Self.abandon(child, mine, String(decoding: message.bytes, as: UTF8.self))
        default:
            // capture-init never ran or died: unshare said why on stderr; the settings may say more.
            let status = child.wait()
            Self.fail(
                "the capture's namespace could not be made (status \(status))"
                    + (UserNamespaceCheck.refusal(uid: 1).map { "; perhaps: \($0)" } ?? ""))
        }
        let registration = CaptureRegistration(
            name: self.name ?? Self.baseName(self.command[0]),
            commandLine: ClientProcess.commandLine(arguments: self.command, limit: 4096),
            executable: ToolPath.find(self.command[0]) ?? (self.command[0].contains("/") ? self.command[0] : nil),
            pid: Int(child.pid), uid: Int(getuid()), intercept: self.intercept)
        let answer = CaptureRegistrar.register(registration, sockets: sockets, at: capturePath)
        for socket in sockets { close(socket) }
        guard case .success(let connection) = answer else {
            if case .failure(let message) = answer { Self.abandon(child, mine, message) }
            return
        }
        _ = DescriptorPassing.send(mine, bytes: CaptureInit.go, descriptors: [])
        close(mine)
        let status = child.wait()
        close(connection)
        guard status == 0 else { throw ExitCode(status) }
    }

    /// Tells capture-init to give up (the command never starts), waits for it, and exits 1.
    private static func abandon(_ child: ChildProcess, _ channel: Int32, _ message: CustomStringConvertible) -> Never {
        close(channel)
        _ = child.wait()
        Self.fail("\(message)")
    }

    private static func fail(_ message: String) -> Never {
        Console.error("afproxyctl run: \(message)")
        Glibc.exit(1)
    }

    private static func baseName(_ path: String) -> String {
        path.split(separator: "/").last.map(String.init) ?? path
    }

    /// This executable, for unshare to start again as capture-init.
    static func ownExecutable() -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard length > 0 else { return CommandLine.arguments[0] }
        return String(decoding: buffer.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// Signals sent to afproxyctl by another process (`kill`, a service manager, `timeout`) go on
/// to the command; those the terminal sends (Ctrl-C, Ctrl-\\, a hangup) reach the command
/// directly, as every process of the foreground group, and are not sent twice. afproxyctl
/// itself stays until the command ends, to report its status.
enum RunSignals {
    nonisolated(unsafe) static var child: pid_t = 0

    static func forward(to pid: pid_t) {
        Self.child = pid
        for number in [SIGINT, SIGQUIT, SIGTERM, SIGHUP] {
            var action = sigaction()
            action.sa_flags = SA_SIGINFO | SA_RESTART
            action.__sigaction_handler.sa_sigaction = { number, info, _ in
                // si_code <= 0: sent by a process (SI_USER, SI_QUEUE, SI_TKILL); > 0: by the kernel.
                if let info, info.pointee.si_code <= 0 { kill(RunSignals.child, number) }
            }
            sigaction(number, &action, nil)
        }
    }
}

/// `afproxyctl capture-init`: not for people. Runs inside a capture's fresh namespaces, as
/// `afproxyctl run` starts it through unshare: sets the namespace up, sends its sockets back
/// on descriptor 3, waits for the word to go on, and becomes the command. With `--hold`
/// (`capture-hold`'s namespace, which outlives it) it ends once the sockets are sent.
struct CaptureInit: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "capture-init", abstract: "Set up a capture's namespace (used by afproxyctl run).",
        shouldDisplay: false)

    /// The descriptor `run` hands over, and the two words said on it.
    static let channel: Int32 = 3
    static let ready = Array("ready".utf8)
    static let go = Array("go".utf8)

    @Option var uid: UInt32?
    @Option var gid: UInt32?
    @Flag var hold = false
    @Argument(parsing: .captureForPassthrough) var command: [String] = []

    func run() throws {
        let command = self.command.first == "--" ? Array(self.command.dropFirst()) : self.command
        guard let ip = ToolPath.find("ip"), let nft = ToolPath.find("nft"), let unshare = ToolPath.find("unshare")
        else { Self.report("ip, nft or unshare is not installed") }
        let namespace: CaptureNamespace
        do {
            namespace = try CaptureNamespace.setUp(ip: ip, nft: nft)
        } catch {
            Self.report("setting up the capture's network namespace: \(error)")
        }
        guard DescriptorPassing.send(Self.channel, bytes: Self.ready, descriptors: namespace.descriptors) == 0 else {
            Glibc.exit(1)
        }
        for descriptor in namespace.descriptors { close(descriptor) }
        if self.hold { return }
        guard let uid = self.uid, let gid = self.gid else { Glibc.exit(1) }
        guard case .success(let word) = DescriptorPassing.receive(Self.channel, maxBytes: 16), word.bytes == Self.go
        else { Glibc.exit(1) }
        close(Self.channel)
        let arguments =
            ["unshare", "--user", "--map-user=\(uid)", "--map-group=\(gid)", "--"] + command
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        execv(unshare, &argv)
        Console.error("afproxyctl run: cannot start unshare: \(String(cString: strerror(errno)))")
        Glibc.exit(127)
    }

    private static func report(_ message: String) -> Never {
        _ = DescriptorPassing.send(Self.channel, bytes: Array(message.utf8), descriptors: [])
        Glibc.exit(1)
    }
}
