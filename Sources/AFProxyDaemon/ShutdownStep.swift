import ServiceLifecycle

/// One step of the daemon's stop that is not a server's (STOPPING=1, the grace period), as a
/// service of the group so that it takes its place in `Daemon.stopSequence`: it waits for
/// graceful shutdown, then runs `action`. Canceled (a failed start), it does nothing.
struct ShutdownStep: Service {
    let action: @Sendable () async -> Void

    init(_ action: @escaping @Sendable () async -> Void) {
        self.action = action
    }

    func run() async throws {
        do {
            try await gracefulShutdown()
        } catch {
            return
        }
        await self.action()
    }
}
