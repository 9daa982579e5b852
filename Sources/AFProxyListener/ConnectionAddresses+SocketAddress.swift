import AFProxyModel
import NIOCore

/// Starts the lookup of the process of a client on this machine and answers the slot its finding
/// will go to, at once (it is called on the event loop, as a connection is accepted).
package typealias ClientProcessLookupStart = @Sendable (ConnectionAddresses) -> ClientProcessSlot?

extension ConnectionAddresses {
    /// Both ends of an accepted connection; nil unless both are IP addresses.
    init?(local: SocketAddress?, peer: SocketAddress?) {
        guard let local = local.flatMap(Endpoint.init), let peer = peer.flatMap(Endpoint.init) else { return nil }
        self.init(local: local, peer: peer)
    }
}

extension ConnectionAddresses.Endpoint {
    init?(_ address: SocketAddress) {
        switch address {
        case .v4(let v4):
            var raw = v4.address.sin_addr
            let bytes = withUnsafeBytes(of: &raw) { Array($0) }
            self.init(address: bytes, port: UInt16(bigEndian: v4.address.sin_port))
        case .v6(let v6):
            var raw = v6.address.sin6_addr
            let bytes = withUnsafeBytes(of: &raw) { Array($0) }
            self.init(address: bytes, port: UInt16(bigEndian: v6.address.sin6_port))
        case .unixDomainSocket:
            return nil
        }
    }
}
