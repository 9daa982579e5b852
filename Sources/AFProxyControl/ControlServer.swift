import AFProxyAPI
import AFProxyManager
import AFProxyModel
import AFProxyServerKit
import AFProxyStore
import NIOCore
import NIOHTTP1
import NIOPosix
import ServiceLifecycle

#if canImport(Glibc)
import Glibc
#endif

/// The control socket: a Unix domain socket speaking HTTP/1.1 with JSON, so that `afproxyctl` and
/// `curl --unix-socket` both work. Not world-writable (0600, or 0660 under systemd so the
/// daemon's group may steer it); a stale socket from a crashed daemon is replaced, a live one is
/// not; the file is removed at exit. Each connection is held to `ControlLimits`: a cap on
/// connections, sizes for a request's head and body, and timeouts for a request that stops halfway.
package final class ControlServer: Service, Sendable {
    package struct Failure: Error, CustomStringConvertible {
        package var description: String
    }

    let manager: SessionManager
    private let group: any EventLoopGroup
    let extraStats: @Sendable (inout SessionStats) -> Void
    private let metrics: Metrics?
    /// The local CA behind `/v1/ca` (nil: the daemon has none, as in tests).
    private let authority: (any LocalAuthority)?
    private let sockets = ServerSockets()
    /// The socket file this server created, removed at the stop (an adopted one is systemd's).
    private let path = Locked<String?>(nil)
    private let admission = ControlLimits.admission()
    /// The web port's connections count apart, so a full dashboard never locks out afproxyctl.
    private let webAdmission = ControlLimits.admission()
    private let web = Locked<WebAddress?>(nil)
    private let proxyAddresses = Locked<[String]>([])
    private let captures = Locked<[CaptureSummary]>([])
    /// The event streams and live feeds open now: a graceful stop ends them cleanly.
    private let streams = ControlStreams()

    /// What `GET /metrics` answers: the daemon's metrics module renders them, this one only serves.
    package struct Metrics: Sendable {
        package var contentType: String
        package var exposition: @Sendable () -> [UInt8]

        package init(contentType: String, exposition: @escaping @Sendable () -> [UInt8]) {
            self.contentType = contentType
            self.exposition = exposition
        }
    }

    package init(
        manager: SessionManager, group: any EventLoopGroup,
        extraStats: @escaping @Sendable (inout SessionStats) -> Void = { _ in }, metrics: Metrics? = nil,
        authority: (any LocalAuthority)? = nil
    ) {
        self.manager = manager
        self.group = group
        self.extraStats = extraStats
        self.metrics = metrics
        self.authority = authority
    }

    /// Creates the socket at `path` with `mode`, creating a missing parent directory (0700).
    package func bind(path: String, mode: mode_t) async throws {
        try Self.prepare(path)
        // The socket must never be reachable with a looser mode, not even between bind and chmod:
        // bind under a umask that already yields `mode`. Nothing else creates files at startup.
        let previous = umask(~mode & 0o777)
        let channel: any Channel
        do {
            channel = try await self.bootstrap().bind(unixDomainSocketPath: path).get()
            umask(previous)
        } catch {
            umask(previous)
            throw error
        }
        guard chmod(path, mode) == 0 else {
            let reason = String(cString: strerror(errno))
            try? await channel.close()
            throw Failure(description: "cannot set mode \(String(mode, radix: 8)) on \(path): \(reason)")
        }
        self.path.withLock { $0 = path }
        do {
            try await self.sockets.add(channel)
        } catch {
            self.removeSocketFile()
            throw error
        }
    }

    /// Adopts a control socket handed over by systemd (afproxy.socket sets its mode).
    package func adopt(descriptor: CInt) async throws {
        try await self.sockets.adopt(self.bootstrap(), descriptor: descriptor)
    }

    /// Serves until the group stops it, then closes the socket, removes its file, and gives the
    /// event streams and live feeds their last chunk (no new one can start now).
    package func run() async throws {
        await self.sockets.serve {
            self.removeSocketFile()
            await self.streams.endAll(within: .seconds(2))
        }
    }

    private func removeSocketFile() {
        let path = self.path.withLock { path in
            defer { path = nil }
            return path
        }
        if let path { unlink(path) }
    }

    /// What `GET /v1/web` answers from now on (nil: the dashboard is off).
    package func publishWeb(_ address: WebAddress?) {
        self.web.withLock { $0 = address }
    }

    /// The proxy's bound addresses `GET /v1/status` answers from now on.
    package func publishProxyAddresses(_ addresses: [String]) {
        self.proxyAddresses.withLock { $0 = addresses }
    }

    /// The captures running, which `GET /v1/status` answers from now on.
    package func publishCaptures(_ captures: [CaptureSummary]) {
        self.captures.withLock { $0 = captures }
    }

    /// Sets up a connection of the web dashboard's port: the same limits and API as the socket,
    /// with `gate` (its access check and page) in front of the API in place of peer credentials.
    package func configureWebConnection(_ channel: any Channel, gate: [any ChannelHandler]) -> EventLoopFuture<Void> {
        let admission = self.webAdmission
        guard admission.admit(channel) else {
            return admission.refuse(channel, with: ControlLimits.overCapacity(limit: admission.limit).bytes())
        }
        return channel.eventLoop.makeCompletedFuture {
            try self.configure(channel.pipeline.syncOperations, caller: .web, gate: gate)
        }
    }

    private func bootstrap() -> ServerBootstrap {
        let admission = self.admission
        return ServerBootstrap(group: self.group)
            .serverChannelOption(.backlog, value: 64)
            .childChannelInitializer { [self] channel in
                guard admission.admit(channel) else {
                    return admission.refuse(channel, with: ControlLimits.overCapacity(limit: admission.limit).bytes())
                }
                return PeerCredentials.of(channel)
                    .map { Optional($0) }
                    .recover { _ in nil }
                    .flatMapThrowing { peer in
                        try self.configure(channel.pipeline.syncOperations, caller: .socket(peer), gate: [])
                    }
            }
    }

    private func configure(
        _ sync: ChannelPipeline.SynchronousOperations, caller: ControlCaller, gate: [any ChannelHandler]
    ) throws {
        let web = self.web
        let proxyAddresses = self.proxyAddresses
        let captures = self.captures
        try sync.addHandler(ControlLimits.timeoutHandler())
        try sync.configureHTTPServerPipeline(
            withErrorHandling: false, withEncoderConfiguration: .init(),
            withDecoderLimitConfiguration: ControlLimits.decoder)
        try sync.addHandler(ControlParserErrorHandler())
        try sync.addHandler(ControlBodyLimitHandler())
        try sync.addHandlers(gate)
        let router = ControlRouter.api(
            manager: self.manager, extraStats: self.extraStats, metrics: self.metrics, web: { web.withLock { $0 } },
            streams: self.streams, authority: self.authority, listen: { proxyAddresses.withLock { $0 } },
            captures: { captures.withLock { $0 } })
        try sync.addHandler(ControlHandler(router: router, caller: caller))
    }

    /// Makes room for the socket: refuses a live one, removes a stale one.
    private static func prepare(_ path: String) throws {
        let directory = path.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
        if !directory.isEmpty {
            do throws(FileError) {
                try Files.makeDirectory(directory)
            } catch {
                throw Failure(description: error.description)
            }
        }
        var info = stat()
        guard lstat(path, &info) == 0 else { return }
        guard (info.st_mode & S_IFMT) == S_IFSOCK else {
            throw Failure(description: "\(path) exists and is not a socket; not touching it")
        }
        if Self.isLive(path) {
            throw Failure(description: "another afproxy is already serving the control socket \(path)")
        }
        unlink(path)
    }

    /// A socket file with a listener behind it accepts a connection; a stale one refuses.
    private static func isLive(_ path: String) -> Bool {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        return UnixSocketAddress.connect(fd, to: path) == 0
    }
}
