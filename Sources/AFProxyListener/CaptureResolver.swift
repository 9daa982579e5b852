import AFProxyManager
import AFProxyModel
import NIOCore
import NIOPosix

#if canImport(Glibc)
import Glibc
#endif

/// The DNS server of a capture, on the UDP sockets afproxy owns inside its namespace, where
/// every query of the captured program is redirected. It answers A and AAAA from the daemon's
/// own resolution (`getaddrinfo`, off the event loop), so a program's names resolve as afproxy's
/// do, and remembers which name each address was asked as (`CaptureNames`). A name the
/// destination rules refuse (`deny-hosts`, an `allow-hosts` that does not list it) is answered
/// REFUSED before any lookup: it leaves the machine neither as a query nor as a connection.
/// Other record types get an empty answer (no such data), which sends clients back to A/AAAA.
final class CaptureResolver: ChannelInboundHandler {
    typealias InboundIn = AddressedEnvelope<ByteBuffer>
    typealias OutboundOut = AddressedEnvelope<ByteBuffer>

    private let manager: SessionManager
    private let names: CaptureNames

    /// How long a program may keep an answer: short, since afproxy's own resolution may change.
    static let ttl: UInt32 = 30

    init(manager: SessionManager, names: CaptureNames) {
        self.manager = manager
        self.names = names
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let envelope = self.unwrapInboundIn(data)
        let bytes = Array(envelope.data.readableBytesView)
        guard let query = DNSQuery(bytes) else {
            if let id = DNSQuery.id(of: bytes) { self.send(DNSQuery.formatError(id: id), to: envelope, context) }
            return
        }
        guard query.questionClass == 1, !query.name.isEmpty else {
            return self.send(query.answer(.refused), to: envelope, context)
        }
        if self.manager.rules.destinationPolicy.denial(host: query.name) != nil {
            return self.send(query.answer(.refused), to: envelope, context)
        }
        guard query.type == DNSQuery.typeA || query.type == DNSQuery.typeAAAA else {
            return self.send(query.answer(.noError), to: envelope, context)
        }
        let name = query.name
        let names = self.names
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        NIOThreadPool.singleton.runIfActive(eventLoop: context.eventLoop) {
            () -> Result<[IPAddress], DNSQuery.ResponseCode> in
            Self.resolve(name)
        }.whenComplete { result in
            let (resolver, context) = bound.value
            switch result {
            case .success(.success(let addresses)):
                names.remember(name, for: addresses)
                let wanted = addresses.filter { $0.isIPv4 == (query.type == DNSQuery.typeA) }
                resolver.send(
                    query.answer(.noError, addresses: wanted.map(\.bytes), ttl: Self.ttl), to: envelope, context)
            case .success(.failure(let code)):
                resolver.send(query.answer(code), to: envelope, context)
            case .failure:
                resolver.send(query.answer(.serverFailure), to: envelope, context)
            }
        }
    }

    private func send(_ answer: [UInt8], to query: AddressedEnvelope<ByteBuffer>, _ context: ChannelHandlerContext) {
        let envelope = AddressedEnvelope(remoteAddress: query.remoteAddress, data: ByteBuffer(bytes: answer))
        context.writeAndFlush(self.wrapOutboundOut(envelope), promise: nil)
    }

    /// The addresses of `name`, both families, or the answer's code when there are none
    /// (EAI_NODATA, -5, is a GNU extension Glibc's module does not export).
    static func resolve(_ name: String) -> Result<[IPAddress], DNSQuery.ResponseCode> {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let rc = getaddrinfo(name, nil, &hints, &list)
        defer { if let list { freeaddrinfo(list) } }
        guard rc == 0 else {
            return .failure(rc == EAI_NONAME || rc == -5 ? DNSQuery.ResponseCode.nameError : .serverFailure)
        }
        var addresses: [IPAddress] = []
        var entry = list
        while let current = entry {
            if let address = current.pointee.ai_addr {
                switch current.pointee.ai_family {
                case AF_INET:
                    let v4 = UnsafeRawPointer(address).loadUnaligned(as: sockaddr_in.self)
                    if let ip = IPAddress(bytes: withUnsafeBytes(of: v4.sin_addr) { Array($0) }) {
                        addresses.append(ip)
                    }
                case AF_INET6:
                    let v6 = UnsafeRawPointer(address).loadUnaligned(as: sockaddr_in6.self)
                    if let ip = IPAddress(bytes: withUnsafeBytes(of: v6.sin6_addr) { Array($0) }) {
                        addresses.append(ip)
                    }
                default: break
                }
            }
            entry = current.pointee.ai_next
        }
        var seen = Set<IPAddress>()
        return .success(addresses.filter { seen.insert($0).inserted })
    }
}
