import NIOCore
import NIOHTTP1

/// A client connection's request decoder: NIO's `HTTPRequestDecoder`, held only while a request
/// may be on its way. NIO's keeps about 1.2 KiB for as long as the connection lives (llhttp's
/// state and callbacks, and the room it reserves for 16 header fields), which an idle keep-alive
/// connection has no use for: the connection handler lets it go between requests
/// (`releaseParser`), and the next bytes that arrive make a fresh one. A fresh parser behaves as
/// the old one would only where the old one stood between two messages with nothing held back,
/// so `releaseParser` keeps it unless that is certain.
final class RequestDecoder: ByteToMessageDecoder {
    typealias InboundOut = HTTPServerRequestPart

    private let limits: NIOHTTPDecoderLimitConfiguration
    private var parser: HTTPRequestDecoder?
    /// The context the parser was added with, which it is given back when it goes.
    private var context: ChannelHandlerContext?
    /// The parser is running (a part it passed on can lead to `releaseParser`): it stays.
    private var decoding = false
    /// The input so far ends with an empty line (CRLF CRLF), and the parser took all of it.
    private var inputEndsWithEmptyLine = false
    /// The parser just passed on the end of a request that it took for a protocol upgrade, and
    /// has stopped for good (`UpgradeDeclineHandler`).
    private var parserStoppedAtUpgrade = false

    init(limits: NIOHTTPDecoderLimitConfiguration) {
        self.limits = limits
    }

    /// The parser is here, for a test.
    var holdsParser: Bool { self.parser != nil }

    func decoderAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func decoderRemoved(context: ChannelHandlerContext) {
        self.parser?.decoderRemoved(context: context)
        self.parser = nil
        self.context = nil
    }

    func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        let endsWithEmptyLine = Self.endsWithEmptyLine(buffer)
        self.inputEndsWithEmptyLine = false
        self.decoding = true
        defer { self.decoding = false }
        let state = try self.parser(context).decode(context: context, buffer: &buffer)
        self.inputEndsWithEmptyLine = endsWithEmptyLine && buffer.readableBytes == 0
        if self.parserStoppedAtUpgrade {
            // It stopped right behind that request's end; a fresh one parses what follows.
            self.parserStoppedAtUpgrade = false
            self.parser?.decoderRemoved(context: context)
            self.parser = nil
            return .continue
        }
        return state
    }

    /// The request whose `.end` the parser is passing on asked for a protocol upgrade, which
    /// llhttp takes as the end of HTTP on the connection: NIO's parser reads nothing after it.
    /// This proxy never upgrades (it drops `Upgrade` as hop-by-hop, so the origin answers in
    /// HTTP), so what the client sends next is its next request, and the parser is replaced as
    /// soon as it returns. Without that, the connection's next request sat unread until 408.
    func upgradeDeclined() {
        if self.decoding { self.parserStoppedAtUpgrade = true }
    }

    func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws -> DecodingState {
        // Without a parser nothing is held back, and a fresh one would find the end of input
        // between two messages: it would say nothing.
        guard self.parser != nil || buffer.readableBytes > 0 else { return .needMoreData }
        self.decoding = true
        defer {
            self.decoding = false
            self.parserStoppedAtUpgrade = false
        }
        return try self.parser(context).decodeLast(context: context, buffer: &buffer, seenEOF: seenEOF)
    }

    /// Lets the parser go, if that loses nothing. The caller knows that the last part parsed was
    /// a request's `.end`, with no request head and no error after it. Then, if the input ends
    /// with an empty line that the parser took in full, llhttp stands between two messages:
    /// bytes after that `.end` would be empty lines, which llhttp skips, or the start of a request
    /// whose head, ending in that empty line, would have been parsed (a head or an error the
    /// caller would have seen); and with none after it, the request itself ended with the empty
    /// line (no body, or a chunked one). A request whose body came last keeps the parser until
    /// the next one ends.
    func releaseParser() {
        guard !self.decoding, self.inputEndsWithEmptyLine, let parser = self.parser, let context = self.context
        else { return }
        parser.decoderRemoved(context: context)
        self.parser = nil
    }

    private func parser(_ context: ChannelHandlerContext) -> HTTPRequestDecoder {
        if let parser = self.parser { return parser }
        // `.forwardBytes`: bytes a client sends right behind its CONNECT reach the tunnel when
        // the decoder leaves (otherwise they are dropped).
        let parser = HTTPRequestDecoder(leftOverBytesStrategy: .forwardBytes, limitConfiguration: self.limits)
        parser.decoderAdded(context: context)
        self.parser = parser
        return parser
    }

    private static func endsWithEmptyLine(_ buffer: ByteBuffer) -> Bool {
        buffer.readableBytes >= 4 && buffer.getInteger(at: buffer.writerIndex - 4, as: UInt32.self) == 0x0D0A_0D0A
    }
}
