import AFProxyAPI
import ArgumentParser
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// `afproxyctl capture-hold INSTANCE`: what `afproxy-capture@INSTANCE.service` runs, as root.
/// Makes the service's network namespace and mounts it where the drop-in's
/// `NetworkNamespacePath=` names it (`unshare --net=PATH` starting `capture-init --hold`, which
/// sets it up as for `run` and sends its sockets back), tells systemd it is ready (so the
/// service starts only once the namespace is there), hands the sockets to the daemon, and hands
/// them again whenever the daemon comes back after a restart: it keeps its own copies, so a
/// connection the service opens meanwhile waits in the listening socket's queue rather than
/// being refused. Stopped, it unmounts the namespace; a service still in it keeps it until
/// it ends.
struct CaptureHold: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "capture-hold", abstract: "Keep a captured service's namespace (run by afproxy-capture@.service).",
        shouldDisplay: false)

    @ParentCommand var root: AFProxyCtl
    var global: GlobalOptions { self.root.global }

    @Argument var instance: String
    @Option var namespaceDirectory = ServiceCapture.namespaceDirectory

    /// Seconds between tries to reach a daemon that is not there (yet, or again).
    static let retrySeconds: UInt32 = 1

    func run() throws {
        let capture: ServiceCapture
        do {
            capture = try ServiceCapture(service: self.instance)
        } catch {
            Self.fail(error.description)
        }
        guard geteuid() == 0 else {
            Self.fail("it mounts a namespace for systemd to join: it runs as root (afproxy-capture@.service)")
        }
        guard let unshare = ToolPath.find("unshare") else { Self.fail("unshare (util-linux) is not installed") }
        for tool in ["ip", "nft"] where ToolPath.find(tool) == nil {
            Self.fail("\(tool) (\(tool == "ip" ? "iproute2" : "nftables")) is not installed; a capture needs it")
        }
        let path = capture.namespacePath(in: self.namespaceDirectory)
        do {
            try NamespaceFile.prepare(path)
        } catch {
            Self.fail(error.description)
        }
        HoldSignals.install(removing: path)
        let sockets: [Int32]
        switch Self.makeNamespace(at: path, unshare: unshare) {
        case .success(let received): sockets = received
        case .failure(let failure):
            NamespaceFile.remove(path)
            Self.fail(failure.description)
        }
        ServiceNotify.ready(status: "namespace at \(path); waiting for afproxy")
        Console.error("afproxyctl capture-hold: \(capture.service)'s namespace is at \(path)")
        let registration = CaptureRegistration(
            name: capture.service, commandLine: "systemd service \(capture.service)", executable: nil,
            pid: Int(getpid()), uid: Int(getuid()), intercept: false, unit: capture.service)
        let capturePath = CaptureSocketPath.forControlSocket(self.global.client.socketPath)
        var lastFailure: String?
        while true {
            switch CaptureRegistrar.register(registration, sockets: sockets, at: capturePath) {
            case .success(let connection):
                lastFailure = nil
                ServiceNotify.status("namespace at \(path); handed to afproxy")
                Console.error("afproxyctl capture-hold: afproxy at \(capturePath) serves \(capture.service)")
                Self.waitForEnd(of: connection)
                Console.error("afproxyctl capture-hold: afproxy went away; waiting for it to come back")
            case .failure(let failure):
                if failure.description != lastFailure {
                    Console.error("afproxyctl capture-hold: \(failure.description); trying again every second")
                    ServiceNotify.status("namespace at \(path); waiting for afproxy (\(failure.description))")
                    lastFailure = failure.description
                }
            }
            sleep(Self.retrySeconds)
        }
    }

    /// `unshare --net=PATH -- afproxyctl capture-init --hold`: the namespace mounted at `path`,
    /// set up, and its sockets.
    private static func makeNamespace(at path: String, unshare: String) -> Result<[Int32], CaptureSetupFailure> {
        var pair: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0 else {
            return .failure(CaptureSetupFailure("socketpair: \(String(cString: strerror(errno)))"))
        }
        let (mine, theirs) = (pair[0], pair[1])
        defer { close(mine) }
        let arguments = ["unshare", "--net=\(path)", "--", Run.ownExecutable(), "capture-init", "--hold"]
        let spawned = ChildProcess.spawn(unshare, arguments, descriptors: [(theirs, CaptureInit.channel)])
        close(theirs)
        guard case .success(let child) = spawned else {
            if case .failure(let failure) = spawned { return .failure(CaptureSetupFailure(failure.description)) }
            return .failure(CaptureSetupFailure("cannot start unshare"))
        }
        let received = DescriptorPassing.receive(mine, maxBytes: CaptureRegistration.maxMessage)
        let status = child.wait()
        switch received {
        case .success(let message)
        where message.bytes == CaptureInit.ready && message.descriptors.count == CaptureRegistration.descriptorCount
            && status == 0:
            return .success(message.descriptors)
        case .success(let message):
            for descriptor in message.descriptors { close(descriptor) }
            let said = String(decoding: message.bytes, as: UTF8.self)
            return .failure(
                CaptureSetupFailure(
                    message.bytes.isEmpty || message.bytes == CaptureInit.ready
                        ? "the namespace could not be made (status \(status))" : said))
        case .failure:
            return .failure(CaptureSetupFailure("the namespace could not be made (status \(status))"))
        }
    }

    /// The daemon writes nothing after its answer: the connection's end is the capture's.
    private static func waitForEnd(of connection: Int32) {
        var byte: UInt8 = 0
        while true {
            let got = recv(connection, &byte, 1, 0)
            if got > 0 || (got < 0 && errno == EINTR) { continue }
            break
        }
        close(connection)
    }

    private static func fail(_ message: String) -> Never {
        Console.error("afproxyctl capture-hold: \(message)")
        Glibc.exit(1)
    }
}

/// SIGTERM (systemctl stop), SIGINT and SIGHUP unmount the namespace and end the holder.
enum HoldSignals {
    nonisolated(unsafe) static var path: UnsafeMutablePointer<CChar>?

    static func install(removing path: String) {
        Self.path = strdup(path)
        for number in [SIGINT, SIGTERM, SIGHUP] {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { _ in
                if let path = HoldSignals.path { NamespaceFile.remove(path) }
                _exit(0)
            }
            sigaction(number, &action, nil)
        }
    }
}
