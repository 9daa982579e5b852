import AFProxyModel
import FoundationEssentials
import NIOCore

/// Reads the WebSocket frames of one direction of a tunnel (RFC 6455 §5), as a plain value fed
/// the chunks that passed however they were split, and answers the messages they completed: a
/// fragmented message joined into one, the control frames that may come between its fragments
/// each a message of their own, payloads unmasked and kept up to `limit` bytes a message.
///
/// It reads beside the relay and never steers it: framing that breaks the RFC (a reserved
/// opcode, a continuation with no message, a fragmented or long control frame, a 64-bit length
/// with its top bit set) stops the reading of that direction for good (`stopped`), while the
/// bytes go on as they came. Extensions are not undone: a `permessage-deflate` payload is kept
/// as it passed.
package struct WebSocketFrameReader: Sendable {
    package let direction: WebSocketMessage.Direction
    /// Payload bytes kept a message; the rest is counted in its size only.
    package let limit: Int
    /// The framing broke: nothing more of this direction is read.
    package private(set) var stopped = false

    /// One frame's header as read: where its payload goes and how much of it is still to come.
    private struct Frame: Sendable {
        var fin: Bool
        var control: Bool
        var mask: (UInt8, UInt8, UInt8, UInt8)?
        var remaining: UInt64
        /// Payload bytes of this frame read so far: where the mask stands.
        var offset: UInt64 = 0
    }

    /// A message being read: a data message over its fragments, or one control frame.
    private struct Partial: Sendable {
        var opcode: WebSocketMessage.Opcode
        var size: Int64 = 0
        var payload: [UInt8] = []
    }

    /// Bytes of `\r\n\r\n` matched while the origin's answer head is skipped (the origin's side of
    /// an upgrade starts with it); nil once frames come.
    private var headMatched: Int?
    private var header: [UInt8] = []
    private var frame: Frame?
    private var message: Partial?
    private var control: Partial?

    /// `skipsHTTPHead`: the bytes start with an HTTP head (the origin's `101` answer) to pass over.
    package init(direction: WebSocketMessage.Direction, limit: Int, skipsHTTPHead: Bool = false) {
        self.direction = direction
        self.limit = max(0, limit)
        self.headMatched = skipsHTTPHead ? 0 : nil
        self.header.reserveCapacity(14)
    }

    package mutating func read(_ buffer: ByteBuffer, at now: Date) -> [WebSocketMessage] {
        buffer.withUnsafeReadableBytes { self.read($0, at: now) }
    }

    package mutating func read(_ bytes: [UInt8], at now: Date) -> [WebSocketMessage] {
        bytes.withUnsafeBytes { self.read($0, at: now) }
    }

    package mutating func read(_ bytes: UnsafeRawBufferPointer, at now: Date) -> [WebSocketMessage] {
        var done: [WebSocketMessage] = []
        var index = 0
        while index < bytes.count && !self.stopped {
            if let matched = self.headMatched {
                index = self.skipHead(bytes, from: index, matched: matched)
            } else if self.frame == nil {
                self.header.append(bytes[index])
                index += 1
                if let length = Self.headerLength(self.header), self.header.count == length {
                    self.beginFrame()
                    if self.frame?.remaining == 0 { self.endFrame(at: now, into: &done) }
                }
            } else {
                let remaining = self.frame!.remaining
                let take = Int(min(remaining, UInt64(bytes.count - index)))
                self.payload(UnsafeRawBufferPointer(rebasing: bytes[index..<(index + take)]))
                index += take
                if self.frame!.remaining == 0 { self.endFrame(at: now, into: &done) }
            }
        }
        return done
    }

    private mutating func skipHead(_ bytes: UnsafeRawBufferPointer, from start: Int, matched: Int) -> Int {
        let end: [UInt8] = [13, 10, 13, 10]
        var matched = matched
        var index = start
        while index < bytes.count && matched < 4 {
            let byte = bytes[index]
            index += 1
            matched = byte == end[matched] ? matched + 1 : (byte == 13 ? 1 : 0)
        }
        self.headMatched = matched == 4 ? nil : matched
        return index
    }

    /// The whole header's length once its first two bytes say it (§5.2): 2, then 2 or 8 of
    /// extended length, then 4 of masking key.
    private static func headerLength(_ header: [UInt8]) -> Int? {
        guard header.count >= 2 else { return nil }
        let length7 = header[1] & 0x7F
        let extended = length7 == 126 ? 2 : length7 == 127 ? 8 : 0
        return 2 + extended + (header[1] & 0x80 != 0 ? 4 : 0)
    }

    private mutating func beginFrame() {
        let header = self.header
        self.header.removeAll(keepingCapacity: true)
        let fin = header[0] & 0x80 != 0
        let code = header[0] & 0x0F
        let masked = header[1] & 0x80 != 0
        let length7 = header[1] & 0x7F
        var length = UInt64(length7)
        var next = 2
        if length7 == 126 {
            length = UInt64(header[2]) << 8 | UInt64(header[3])
            next = 4
        } else if length7 == 127 {
            length = header[2..<10].reduce(0) { $0 << 8 | UInt64($1) }
            next = 10
            guard length >> 63 == 0 else { return self.stop() }
        }
        let mask = masked ? (header[next], header[next + 1], header[next + 2], header[next + 3]) : nil
        if code == 0 {
            guard self.message != nil else { return self.stop() }
        } else {
            guard let opcode = WebSocketMessage.Opcode(code: code) else { return self.stop() }
            if code >= 8 {
                guard fin, length <= 125 else { return self.stop() }
                self.control = Partial(opcode: opcode)
            } else {
                guard self.message == nil else { return self.stop() }
                self.message = Partial(opcode: opcode)
            }
        }
        self.frame = Frame(fin: fin, control: code >= 8, mask: mask, remaining: length)
    }

    /// Counts a piece of the frame's payload into its message, keeping (unmasked) what fits.
    private mutating func payload(_ bytes: UnsafeRawBufferPointer) {
        var frame = self.frame!
        var partial = (frame.control ? self.control : self.message)!
        // Moved out and back, so that the payload's storage is appended to in place.
        if frame.control { self.control = nil } else { self.message = nil }
        let keep = min(bytes.count, max(0, self.limit - partial.payload.count))
        if keep > 0 {
            let start = partial.payload.count
            partial.payload.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[0..<keep]))
            if let mask = frame.mask {
                let key = [mask.0, mask.1, mask.2, mask.3]
                let phase = Int(frame.offset % 4)
                partial.payload.withUnsafeMutableBufferPointer { kept in
                    for index in 0..<keep { kept[start + index] ^= key[(phase + index) & 3] }
                }
            }
        }
        partial.size += Int64(bytes.count)
        frame.offset += UInt64(bytes.count)
        frame.remaining -= UInt64(bytes.count)
        if frame.control { self.control = partial } else { self.message = partial }
        self.frame = frame
    }

    private mutating func endFrame(at now: Date, into done: inout [WebSocketMessage]) {
        guard let frame = self.frame else { return }
        self.frame = nil
        let partial: Partial
        if frame.control {
            partial = self.control!
            self.control = nil
        } else {
            guard frame.fin else { return }
            partial = self.message!
            self.message = nil
        }
        done.append(
            WebSocketMessage(
                direction: self.direction, opcode: partial.opcode, size: partial.size, at: now,
                payload: partial.payload, cut: Int64(partial.payload.count) < partial.size))
    }

    private mutating func stop() {
        self.stopped = true
        self.frame = nil
        self.message = nil
        self.control = nil
        self.header = []
    }
}
