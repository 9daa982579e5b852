/// Both ends of an accepted TCP connection, as raw addresses: what the client-process lookup
/// matches against the kernel's socket table (the client's socket has them the other way round).
package struct ConnectionAddresses: Sendable, Equatable, Hashable {
    package struct Endpoint: Sendable, Equatable, Hashable {
        /// 4 bytes (IPv4) or 16 (IPv6), network order.
        package var address: [UInt8]
        package var port: UInt16

        package init(address: [UInt8], port: UInt16) {
            self.address = address
            self.port = port
        }

        /// An IPv4-mapped IPv6 address (`::ffff:a.b.c.d`, how a dual-stack listener sees an IPv4
        /// client) as the IPv4 address the client's own socket has.
        package var unmapped: Endpoint {
            guard self.address.count == 16, self.address[0..<10].allSatisfy({ $0 == 0 }),
                self.address[10] == 0xFF, self.address[11] == 0xFF
            else { return self }
            return Endpoint(address: Array(self.address[12..<16]), port: self.port)
        }

        package var isLoopback: Bool {
            let plain = self.unmapped
            if plain.address.count == 4 { return plain.address[0] == 127 }
            return plain.address == [UInt8](repeating: 0, count: 15) + [1]
        }
    }

    /// The proxy's end.
    package var local: Endpoint
    /// The client's end.
    package var peer: Endpoint

    package init(local: Endpoint, peer: Endpoint) {
        self.local = local
        self.peer = peer
    }

    /// Both ends as the client's socket has them: IPv4-mapped addresses unmapped.
    package var unmapped: ConnectionAddresses {
        ConnectionAddresses(local: self.local.unmapped, peer: self.peer.unmapped)
    }

    /// Whether the client is on this machine: a loopback peer, or one whose address is the
    /// proxy's own (a client that connected to the machine's LAN address).
    package var peerIsLocal: Bool {
        self.peer.isLoopback || self.peer.unmapped.address == self.local.unmapped.address
    }
}
