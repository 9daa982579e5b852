import CNetlink

/// The watcher's conversation with the kernel as a value, tested without a socket: which dump to
/// ask for next, what a received message does to the tables, and when the first full picture is
/// there (`isSynced`; until then the status is `unknown`).
///
/// One dump at a time: the kernel refuses a second dump on a socket while one runs. A dump's
/// answers carry its sequence number; notifications carry 0.
///
/// Why a link or address notification asks for the routes again: when an interface goes down or
/// loses its address, the kernel flushes its IPv4 routes without sending `RTM_DELROUTE` for each,
/// so the route table we hold would keep a default route that is gone. A fresh dump is a few
/// hundred bytes, and links change rarely.
struct NetlinkSync: Sendable {
    enum Dump: Sendable, Equatable {
        case links
        case routes(family: UInt8)
    }

    private(set) var tables = NetworkTables()
    /// The first link dump and route dumps of both families have finished.
    private(set) var isSynced = false
    private var queue: [Dump]
    private var running: (dump: Dump, sequence: UInt32)?
    private var collectedLinks: [NetworkLink] = []
    private var collectedRoutes: Set<NetworkRoute> = []
    private var nextSequence: UInt32 = 1

    static let routeDumps: [Dump] = [.routes(family: UInt8(AF_INET)), .routes(family: UInt8(AF_INET6))]

    init() {
        self.queue = [.links] + Self.routeDumps
    }

    /// The dump to ask for now, with its sequence number; nil while one runs or none is due.
    mutating func nextRequest() -> (dump: Dump, sequence: UInt32)? {
        guard self.running == nil, !self.queue.isEmpty else { return nil }
        let dump = self.queue.removeFirst()
        let sequence = self.nextSequence
        self.nextSequence = self.nextSequence == UInt32.max ? 1 : self.nextSequence + 1
        self.running = (dump, sequence)
        self.collectedLinks = []
        self.collectedRoutes = []
        return (dump, sequence)
    }

    /// One received message: part of the running dump, or a notification.
    mutating func receive(_ message: NetlinkMessage) {
        if let running = self.running, message.sequence == running.sequence, message.sequence != 0 {
            self.dumpAnswer(message, running.dump)
            return
        }
        let topic = self.tables.apply(message)
        // Keep a running route dump consistent with what was announced while it ran.
        if case .routes(let family)? = self.running?.dump, let route = NetworkRoute(payload: message.payload),
            route.family == family
        {
            if topic == .newRoute { self.collectedRoutes.update(with: route) }
            if topic == .deleteRoute { self.collectedRoutes.remove(route) }
        }
        if topic == .newLink || topic == .deleteLink || topic == .address { self.enqueueRouteDumps() }
    }

    /// The socket overflowed (`ENOBUFS`): notifications were lost, so everything is asked again.
    mutating func lostMessages() {
        for dump in [Dump.links] + Self.routeDumps where !self.queue.contains(dump) {
            self.queue.append(dump)
        }
    }

    private mutating func enqueueRouteDumps() {
        for dump in Self.routeDumps where !self.queue.contains(dump) { self.queue.append(dump) }
    }

    private mutating func dumpAnswer(_ message: NetlinkMessage, _ dump: Dump) {
        if message.isDone || message.isError {
            // An error ends the dump too (a kernel without IPv6 refuses that family's dump):
            // the family then has no default route.
            switch dump {
            case .links: self.tables.links = Dictionary(self.collectedLinks.map { ($0.index, $0) }) { $1 }
            case .routes(let family): self.tables.replaceRoutes(family: family, with: self.collectedRoutes)
            }
            self.running = nil
            if !self.isSynced && self.queue.isEmpty { self.isSynced = true }
            return
        }
        switch (dump, message.topic) {
        case (.links, .newLink):
            if let link = NetworkLink(payload: message.payload) { self.collectedLinks.append(link) }
        case (.routes, .newRoute):
            if let route = NetworkRoute(payload: message.payload) { self.collectedRoutes.insert(route) }
        default:
            break
        }
    }
}
