import AFProxyAPI
import AFProxyControl
import AFProxyListener
import AFProxyModel
import FoundationEssentials
import Logging
import NIOCore
import NIOPosix

#if canImport(Glibc)
import Glibc
#endif

/// The capture socket (`CaptureSocketPath`, beside the control socket, with its mode and its
/// rule of who may use it): where `afproxyctl run` hands over the sockets it opened inside a
/// capture's namespace (`DescriptorPassing`; NIO cannot receive descriptors, hence a socket
/// read by hand, on a thread of its own). Each accepted connection is one capture: the
/// registration and its four sockets, which the listener then serves
/// (`ProxyListener.adoptCapture`), an answer with the capture's id, and the capture lasts until
/// that connection closes, when afproxyctl ends with its command. A service's capture
/// (`afproxyctl capture-hold`) registers again after each restart of the daemon.
final class CaptureReceiver: Sendable {
    private struct State {
        var socket: Int32 = -1
        var path: String?
        var nextID = 1
        var captures: [Int: (channels: CaptureChannels, connection: any Channel, summary: CaptureSummary)] = [:]

        var summaries: [CaptureSummary] { self.captures.values.map(\.summary).sorted { $0.id < $1.id } }
        var stopped = false
    }

    private let listener: ProxyListener
    private let authority: any LocalAuthority
    /// Tells the control API which captures run (`GET /v1/status`).
    private let publish: @Sendable ([CaptureSummary]) -> Void
    private let group: any EventLoopGroup
    private let logger: Logger
    private let state = Locked(State())
    private let thread = NIOThreadPool(numberOfThreads: 1)

    /// How long a client may take to send its registration: it has it ready when it connects.
    static let registrationTimeout = timeval(tv_sec: 5, tv_usec: 0)

    init(
        listener: ProxyListener, authority: any LocalAuthority, group: any EventLoopGroup, logger: Logger,
        publish: @escaping @Sendable ([CaptureSummary]) -> Void
    ) {
        self.listener = listener
        self.publish = publish
        self.authority = authority
        self.group = group
        self.logger = logger
    }

    /// Creates the socket at `path` with `mode` (a stale file from a crashed run is replaced)
    /// and starts accepting.
    func bind(path: String, mode: mode_t) throws {
        let fd = socket(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw Failure("socket: \(String(cString: strerror(errno)))") }
        unlink(path)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        guard path.utf8.count <= UnixSocketAddress.maxPathLength else {
            close(fd)
            throw Failure("the capture socket's path is too long: \(path)")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: path.utf8)
            raw[path.utf8.count] = 0
        }
        let previous = umask(~mode & 0o777)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        umask(previous)
        guard bound == 0, chmod(path, mode) == 0, listen(fd, 16) == 0 else {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw Failure("cannot listen on \(path): \(reason)")
        }
        self.state.withLock {
            $0.socket = fd
            $0.path = path
        }
        self.thread.start()
        self.thread.submit { _ in self.accept(on: fd) }
    }

    /// Stops accepting, ends every capture (their sockets close; connections already accepted
    /// run to their end) and removes the socket file.
    func stop() {
        let (fd, path, captures) = self.state.withLock { state in
            state.stopped = true
            defer { state.captures = [:] }
            return (state.socket, state.path, state.captures)
        }
        for capture in captures.values {
            capture.channels.close()
            capture.connection.close(promise: nil)
        }
        guard fd >= 0 else { return }
        shutdown(fd, Int32(SHUT_RDWR))
        if let path { unlink(path) }
        try? self.thread.syncShutdownGracefully()
        close(fd)
    }

    private func accept(on fd: Int32) {
        while true {
            let connection = Glibc.accept(fd, nil, nil)
            if connection < 0 {
                if errno == EINTR || errno == ECONNABORTED { continue }
                if self.state.withLock({ $0.stopped }) { return }
                if errno == EMFILE || errno == ENFILE {
                    usleep(100_000)
                    continue
                }
                return
            }
            _ = fcntl(connection, F_SETFD, FD_CLOEXEC)
            self.serve(connection)
        }
    }

    /// One registration: refused with a reason, or answered with the capture's id, after which
    /// the connection belongs to NIO, which notices its end.
    private func serve(_ connection: Int32) {
        var timeout = Self.registrationTimeout
        setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        func refuse(_ reason: String, closing descriptors: [Int32] = []) {
            for descriptor in descriptors { close(descriptor) }
            self.answer(connection, CaptureAnswer(error: reason))
            close(connection)
        }
        guard let peer = PeerCredentials.of(descriptor: connection), peer.isAllowed() else {
            return refuse("this user may not use the daemon (the control socket's rule: root, its user or group)")
        }
        guard
            case .success(let message) = DescriptorPassing.receive(connection, maxBytes: CaptureRegistration.maxMessage)
        else { return refuse("no registration arrived") }
        guard let registration = try? JSONDecoder().decode(CaptureRegistration.self, from: Data(message.bytes)),
            message.descriptors.count == CaptureRegistration.descriptorCount
        else { return refuse("the registration cannot be read", closing: message.descriptors) }
        if registration.intercept {
            do {
                try self.authority.prepare()
            } catch {
                return refuse("--intercept needs the local CA: \(error)", closing: message.descriptors)
            }
        }
        let id = self.state.withLock { state in
            defer { state.nextID += 1 }
            return state.nextID
        }
        let process =
            registration.unit.map { ClientProcess(unit: $0) }
            ?? ClientProcess(
                pid: registration.pid, executable: registration.executable,
                commandLine: String(registration.commandLine.prefix(ClientProcess.commandLineLimit)),
                user: Self.userName(registration.uid), uid: registration.uid)
        let source = CaptureSource(
            label: CaptureLabel(id: id, name: registration.name), process: process,
            interceptAll: registration.intercept)
        let tcp = Array(message.descriptors.prefix(2))
        let udp = Array(message.descriptors.suffix(2))
        let channels: CaptureChannels
        do {
            channels = try self.listener.adoptCapture(source, tcp: tcp, udp: udp).wait()
        } catch {
            return refuse("the capture's sockets cannot be served: \(error)", closing: message.descriptors)
        }
        self.answer(connection, CaptureAnswer(id: id))
        let watched = NIOPipeBootstrap(group: self.group)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(CaptureEndHandler())
                }
            }
            .takingOwnershipOfDescriptor(inputOutput: connection)
        guard let watcher = try? watched.wait() else {
            channels.close()
            close(connection)
            return
        }
        let summary = CaptureSummary(
            id: id, name: registration.name, pid: registration.pid,
            commandLine: String(registration.commandLine.prefix(ClientProcess.commandLineLimit)),
            intercept: registration.intercept, startedAt: Date())
        let (stopped, running) = self.state.withLock { state in
            if !state.stopped { state.captures[id] = (channels, watcher, summary) }
            return (state.stopped, state.summaries)
        }
        self.publish(running)
        if stopped {
            channels.close()
            watcher.close(promise: nil)
            return
        }
        self.logger.notice(
            "capture \(id) (\(registration.name)) started: pid \(registration.pid), \(summary.commandLine)")
        watcher.closeFuture.whenComplete { _ in
            channels.close()
            let (ended, running) = self.state.withLock { state in
                (state.captures.removeValue(forKey: id) != nil, state.summaries)
            }
            guard ended else { return }
            self.publish(running)
            self.logger.notice("capture \(id) (\(registration.name)) ended")
        }
    }

    private func answer(_ connection: Int32, _ answer: CaptureAnswer) {
        guard let body = try? JSONEncoder().encode(answer) else { return }
        _ = DescriptorPassing.send(connection, bytes: [UInt8](body), descriptors: [])
    }

    private static func userName(_ uid: Int) -> String? {
        guard let entry = getpwuid(uid_t(uid)), let name = entry.pointee.pw_name else { return nil }
        return String(cString: name)
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }
}

/// Reads (and drops) what comes on a capture's connection, so that NIO notices it close.
private final class CaptureEndHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {}

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}
