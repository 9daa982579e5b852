import AFProxyAPI
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// A small blocking HTTP/1.1 client over the daemon's Unix socket: afproxyctl makes one request
/// and exits, so plain POSIX calls serve it better than an event loop.
package struct ControlClient: Sendable {
    package let socketPath: String
    /// Whether a system call that a signal interrupted (EINTR) ends the request rather than
    /// going on: a signal handler installed without SA_RESTART (`download --wait`'s Ctrl-C)
    /// interrupts a blocked read, and only the handler's own flag says whether that was the point.
    /// Any other interruption is retried: it says nothing about the daemon's answer.
    package var interrupted: @Sendable () -> Bool

    package init(socketPath: String, interrupted: @escaping @Sendable () -> Bool = { false }) {
        self.socketPath = socketPath
        self.interrupted = interrupted
    }

    package struct Response: Sendable {
        package var status: Int
        package var body: [UInt8]
    }

    package enum Failure: Error, Equatable {
        /// Nothing listens at the path, or it cannot be opened.
        case unreachable(String)
        /// The daemon answered something that is not HTTP.
        case protocolError(String)
    }

    /// `body`, when there is one, is JSON (`POST /v1/downloads`); the other requests have none.
    package func request(_ method: String, _ target: String, body: [UInt8] = []) throws(Failure) -> Response {
        let connection = try self.connect()
        defer { close(connection.fd) }
        let type = body.isEmpty ? "" : "Content-Type: application/json\r\n"
        try connection.send(
            "\(method) \(target) HTTP/1.1\r\nHost: afproxy\r\n\(type)Content-Length: \(body.count)\r\n"
                + "Connection: close\r\n\r\n")
        if !body.isEmpty { try connection.send(body) }
        var reader = ResponseReader(fd: connection.fd, interrupted: self.interrupted)
        let head = try reader.readHead()
        var body: [UInt8] = []
        try reader.readBody(head) { body.append(contentsOf: $0) }
        return Response(status: head.status, body: body)
    }

    /// Streams a response body line by line until the daemon closes it or `onLine` answers false.
    package func stream(_ target: String, onLine: (String) -> Bool) throws(Failure) -> Int {
        let connection = try self.connect()
        defer { close(connection.fd) }
        try connection.send("GET \(target) HTTP/1.1\r\nHost: afproxy\r\n\r\n")
        var reader = ResponseReader(fd: connection.fd, interrupted: self.interrupted)
        let head = try reader.readHead()
        var pending: [UInt8] = []
        var going = true
        try reader.readBody(head, closeEndsChunks: true) { bytes in
            guard going else { return }
            pending.append(contentsOf: bytes)
            while let newline = pending.firstIndex(of: 10) {
                let line = String(decoding: pending[..<newline], as: UTF8.self)
                pending.removeSubrange(...newline)
                if !onLine(line) { going = false; return }
            }
        }
        return head.status
    }

    private struct Connection {
        var fd: Int32
        var interrupted: @Sendable () -> Bool

        func send(_ text: String) throws(Failure) {
            try self.send(Array(text.utf8))
        }

        func send(_ bytes: [UInt8]) throws(Failure) {
            var bytes = bytes
            var offset = 0
            while offset < bytes.count {
                let sent = ResponseReader.retryingInterrupts(self.interrupted) {
                    bytes.withUnsafeMutableBytes {
                        Glibc.send(self.fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL))
                    }
                }
                guard sent > 0 else {
                    throw .protocolError("cannot send to the daemon: \(String(cString: strerror(errno)))")
                }
                offset += sent
            }
        }
    }

    private func connect() throws(Failure) -> Connection {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw .unreachable(String(cString: strerror(errno))) }
        guard self.socketPath.utf8.count <= UnixSocketAddress.maxPathLength else {
            close(fd)
            throw .unreachable("the socket path is longer than \(UnixSocketAddress.maxPathLength) bytes")
        }
        let error = UnixSocketAddress.connect(fd, to: self.socketPath)
        guard error == 0 else {
            close(fd)
            throw .unreachable(String(cString: strerror(error)))
        }
        return Connection(fd: fd, interrupted: self.interrupted)
    }
}

/// Reads one HTTP/1.1 response: the head, then a body framed by Content-Length, chunked, or close.
/// Its bytes come from `receive` (the socket in afproxyctl, canned pieces in the tests), so that
/// the framing can be checked without a daemon.
struct ResponseReader {
    struct Head {
        var status: Int
        var contentLength: Int?
        var chunked: Bool
    }

    /// The next bytes that arrived, empty at the end of the stream.
    typealias Receive = () throws(ControlClient.Failure) -> [UInt8]

    private let receive: Receive
    private var buffer: [UInt8] = []

    init(receive: @escaping Receive) {
        self.receive = receive
    }

    /// Reads `fd` with blocking `recv` calls (`receive`, which a test replaces); an EINTR is
    /// retried unless `interrupted` says the signal was meant to end the wait.
    init(
        fd: Int32, interrupted: @escaping () -> Bool = { false },
        receive: @escaping (Int32, UnsafeMutableRawBufferPointer) -> Int = { recv($0, $1.baseAddress, $1.count, 0) }
    ) {
        self.init { () throws(ControlClient.Failure) -> [UInt8] in
            var chunk = [UInt8](repeating: 0, count: 65536)
            let count = Self.retryingInterrupts(interrupted) { chunk.withUnsafeMutableBytes { receive(fd, $0) } }
            if count < 0 { throw .protocolError("cannot read from the daemon: \(String(cString: strerror(errno)))") }
            chunk.removeSubrange(count...)
            return chunk
        }
    }

    /// `call` again while it fails with EINTR and `interrupted` answers false. An interrupted
    /// read was reported as "the control socket answered badly", a protocol error, though the
    /// daemon had done nothing wrong.
    static func retryingInterrupts(_ interrupted: () -> Bool, _ call: () -> Int) -> Int {
        while true {
            let result = call()
            if result >= 0 || errno != EINTR || interrupted() { return result }
        }
    }

    mutating func readHead() throws(ControlClient.Failure) -> Head {
        while true {
            if let end = self.find([13, 10, 13, 10]) {
                let text = String(decoding: self.buffer[..<end], as: UTF8.self)
                self.buffer.removeSubrange(..<(end + 4))
                var lines = text.split(separator: "\r\n").map(String.init)
                guard !lines.isEmpty else { throw .protocolError("empty response") }
                let statusLine = lines.removeFirst().split(separator: " ")
                guard statusLine.count >= 2, statusLine[0].hasPrefix("HTTP/1."),
                    statusLine[1].utf8.count == 3, let status = Self.digits(statusLine[1])
                else {
                    throw .protocolError("not an HTTP response: \(text.prefix(40))")
                }
                var head = Head(status: status, contentLength: nil, chunked: false)
                for line in lines {
                    guard let colon = line.firstIndex(of: ":") else { continue }
                    let name = line[..<colon].lowercased()
                    let value = line[line.index(after: colon)...].trimmedSpaces
                    if name == "content-length" {
                        guard let length = Self.digits(value) else {
                            throw .protocolError("bad Content-Length: \(value.prefix(40))")
                        }
                        head.contentLength = length
                    }
                    if name == "transfer-encoding" && value.lowercased().contains("chunked") { head.chunked = true }
                }
                return head
            }
            guard try self.fill() else { throw .protocolError("the daemon closed the connection before answering") }
        }
    }

    /// A body cut short by the end of the stream is an error, not a shorter body: afproxyctl
    /// would otherwise decode half a JSON document, or print half a list as if it were all.
    static let truncated = ControlClient.Failure.protocolError(
        "the daemon closed the connection in the middle of its answer")

    /// `closeEndsChunks`: a chunked body may also end with the stream, between two chunks. The
    /// event stream has no other end: the daemon closes it when it stops.
    mutating func readBody(
        _ head: Head, closeEndsChunks: Bool = false, _ sink: ([UInt8]) -> Void
    ) throws(ControlClient.Failure) {
        if head.chunked {
            while true {
                var lineEnd = self.find([13, 10])
                while lineEnd == nil {
                    guard try self.fill() else {
                        if closeEndsChunks && self.buffer.isEmpty { return }
                        throw Self.truncated
                    }
                    lineEnd = self.find([13, 10])
                }
                let sizeText =
                    String(decoding: self.buffer[..<lineEnd!], as: UTF8.self).split(separator: ";").first ?? ""
                self.buffer.removeSubrange(..<(lineEnd! + 2))
                guard let size = Self.chunkSize(sizeText.trimmedSpaces) else {
                    throw .protocolError("bad chunk size")
                }
                if size == 0 { return }
                while self.buffer.count < size + 2 {
                    guard try self.fill() else { throw Self.truncated }
                }
                guard self.buffer[size] == 13, self.buffer[size + 1] == 10 else {
                    throw .protocolError("a chunk not followed by CRLF")
                }
                sink(Array(self.buffer[..<size]))
                self.buffer.removeSubrange(..<(size + 2))
            }
        } else if let length = head.contentLength {
            while self.buffer.count < length {
                guard try self.fill() else { throw Self.truncated }
            }
            sink(Array(self.buffer.prefix(length)))
        } else {
            while try self.fill() {}
            sink(self.buffer)
        }
    }

    /// A decimal number of ASCII digits only: `Int()` also takes a sign, and a negative length
    /// trapped further on. Eighteen digits at most, so that it cannot overflow.
    static func digits(_ text: some StringProtocol) -> Int? {
        guard (1...18).contains(text.utf8.count), text.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) else { return nil }
        return Int(text)
    }

    /// A chunk size: hex digits only (no sign, which trapped), fifteen at most, so that the size
    /// and its CRLF cannot overflow.
    static func chunkSize(_ text: String) -> Int? {
        guard (1...15).contains(text.utf8.count), text.allSatisfy(\.isHexDigit) else { return nil }
        return Int(text, radix: 16)
    }

    private func find(_ pattern: [UInt8]) -> Int? {
        guard self.buffer.count >= pattern.count else { return nil }
        for index in 0...(self.buffer.count - pattern.count) where self.buffer[index] == pattern[0] {
            if Array(self.buffer[index..<(index + pattern.count)]) == pattern { return index }
        }
        return nil
    }

    private mutating func fill() throws(ControlClient.Failure) -> Bool {
        let bytes = try self.receive()
        if bytes.isEmpty { return false }
        self.buffer.append(contentsOf: bytes)
        return true
    }
}
