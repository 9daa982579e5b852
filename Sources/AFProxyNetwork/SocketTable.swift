import AFProxyModel

/// The kernel's table of TCP sockets as `/proc/net/tcp` and `/proc/net/tcp6` print it: what
/// tells the inode and the owner's uid of the client's end of a loopback connection. Each line
/// is `sl local rem st tx:rx tr:when retrnsmt uid timeout inode …`, addresses as hex 32-bit words
/// in the host's byte order and ports as hex numbers.
package enum SocketTable {
    package struct Entry: Sendable, Equatable {
        package var local: ConnectionAddresses.Endpoint
        package var remote: ConnectionAddresses.Endpoint
        package var uid: Int
        /// 0 for a socket no file holds any more (TIME_WAIT, a closed one).
        package var inode: UInt64
    }

    /// One line of the table; nil for the heading or a line it cannot read.
    package static func parse(line: Substring) -> Entry? {
        let fields = line.split(separator: " ", maxSplits: 10, omittingEmptySubsequences: true)
        guard fields.count >= 10, fields[0].hasSuffix(":"),
            let local = Self.endpoint(fields[1]), let remote = Self.endpoint(fields[2]),
            let uid = Int(fields[7]), let inode = UInt64(fields[9])
        else { return nil }
        return Entry(local: local, remote: remote, uid: uid, inode: inode)
    }

    /// The socket whose own end is `client` and whose other end is `server`: the client's end of
    /// the connection the proxy accepted. IPv4-mapped addresses match their IPv4 form.
    package static func find(
        client: ConnectionAddresses.Endpoint, server: ConnectionAddresses.Endpoint, in text: String
    )
        -> Entry?
    {
        let client = client.unmapped
        let server = server.unmapped
        for line in text.split(separator: "\n") {
            guard let entry = Self.parse(line: line), entry.local.port == client.port,
                entry.remote.port == server.port, entry.local.unmapped == client, entry.remote.unmapped == server
            else { continue }
            return entry
        }
        return nil
    }

    /// `0100007F:1F90`: the address's 32-bit words as the host stores them, then the port.
    static func endpoint(_ text: Substring) -> ConnectionAddresses.Endpoint? {
        let parts = text.split(separator: ":")
        guard parts.count == 2, let port = UInt16(parts[1], radix: 16) else { return nil }
        let hex = Array(parts[0].utf8)
        guard hex.count == 8 || hex.count == 32 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(hex.count / 2)
        for start in stride(from: 0, to: hex.count, by: 8) {
            guard let word = UInt32(String(decoding: hex[start..<start + 8], as: UTF8.self), radix: 16) else {
                return nil
            }
            withUnsafeBytes(of: word) { bytes.append(contentsOf: $0) }
        }
        return ConnectionAddresses.Endpoint(address: bytes, port: port)
    }
}
