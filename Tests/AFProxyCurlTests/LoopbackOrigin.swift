import AFProxyModel
import Dispatch

#if canImport(Glibc)
import Glibc
#endif

/// An HTTP/1.1 origin on 127.0.0.1 for the session's own tests, in plain sockets so that nothing
/// of the daemon serves it: each request head, on any connection, gets `answer(n)` written whole
/// (n counts the requests from 1), and the connection stays open for the next one until the
/// client closes it. It counts the connections it accepted, which tells a reused connection from
/// a new one.
final class LoopbackOrigin: Sendable {
    let port: Int
    let accepted = Locked(0)
    let requests = Locked(0)
    /// The connection that took the last request, while it is open.
    private let lastConnection = Locked<Int32?>(nil)
    private let listener: Int32
    private let answer: @Sendable (Int) -> [UInt8]

    init(answer: @escaping @Sendable (Int) -> [UInt8]) {
        self.answer = answer
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                bind(listener, socketAddress, length) == 0 && listen(listener, 16) == 0
                    && getsockname(listener, socketAddress, &length) == 0
            }
        }
        precondition(bound, "the test origin cannot listen: errno \(errno)")
        self.listener = listener
        self.port = Int(UInt16(bigEndian: address.sin_port))
        DispatchQueue.global().async { self.acceptConnections() }
    }

    /// The answer of a body of `count` bytes: byte i is `Self.byte(at: i)`.
    static func answer(bodyOf count: Int, extra: [UInt8] = []) -> [UInt8] {
        Array("HTTP/1.1 200 OK\r\nContent-Length: \(count)\r\n\r\n".utf8) + (0..<count).map(Self.byte(at:)) + extra
    }

    /// A pattern that never repeats with a power of two, so that a lost or repeated piece shows.
    static func byte(at index: Int) -> UInt8 { UInt8(truncatingIfNeeded: index &* 7 &+ index / 251) }

    var url: String { "http://127.0.0.1:\(self.port)/" }

    /// Writes `bytes` on the connection of the last request, now, outside any exchange: what an
    /// origin that answers twice does (the client's connection sits idle in its cache by then).
    func writeOnLastConnection(_ bytes: [UInt8]) {
        self.lastConnection.withLock { connection in
            guard let connection else { return }
            _ = bytes.withUnsafeBytes { write(connection, $0.baseAddress, $0.count) }
        }
    }

    /// Stops accepting; connections still open end when their client closes them.
    func stop() {
        shutdown(self.listener, Int32(SHUT_RDWR))
        close(self.listener)
    }

    private func acceptConnections() {
        while true {
            let connection = accept(self.listener, nil, nil)
            guard connection >= 0 else { return }
            self.accepted.withLock { $0 += 1 }
            DispatchQueue.global().async { self.serve(connection) }
        }
    }

    private func serve(_ connection: Int32) {
        defer {
            self.lastConnection.withLock { if $0 == connection { $0 = nil } }
            close(connection)
        }
        var pending: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        let end = Array("\r\n\r\n".utf8)
        while true {
            let count = read(connection, &buffer, buffer.count)
            guard count > 0 else { return }
            pending += buffer[0..<count]
            while let head = pending.indices.dropLast(3).first(where: { Array(pending[$0..<($0 + 4)]) == end }) {
                pending.removeFirst(head + 4)
                let number = self.requests.withLock { value in
                    value += 1
                    return value
                }
                self.lastConnection.withLock { $0 = connection }
                let answer = self.answer(number)
                var written = 0
                while written < answer.count {
                    let result = answer[written...].withUnsafeBytes { write(connection, $0.baseAddress, $0.count) }
                    guard result > 0 else { return }
                    written += result
                }
            }
        }
    }
}
