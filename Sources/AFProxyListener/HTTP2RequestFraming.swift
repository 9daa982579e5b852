#if Interception
import NIOCore
import NIOHPACK
import NIOHTTP2

/// First in an HTTP/2 stream's pipeline: says in the request's fields what HTTP/1 says there and
/// HTTP/2 says in frames, before NIO's codec turns them into an HTTP/1 head. A request whose
/// HEADERS frame does not end the stream and that names no `Content-Length` has a body of
/// unknown length, which `RequestValidator` reads from `Transfer-Encoding: chunked` (a field it
/// removes before the request goes on; the body's bytes come unframed, as the codec gives them).
/// GET and HEAD are left bodiless, as an HTTP/1 GET without a length is. And `Cookie`, which
/// HTTP/2 may split into one field per cookie, is joined again for the HTTP/1 origin
/// (RFC 9113 §8.2.3).
final class HTTP2RequestFraming: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTP2Frame.FramePayload
    typealias InboundOut = HTTP2Frame.FramePayload

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .headers(var headers) = Self.unwrapInboundIn(data) else {
            return context.fireChannelRead(data)
        }
        headers.headers = Self.http1Fields(headers.headers, endStream: headers.endStream)
        context.fireChannelRead(Self.wrapInboundOut(.headers(headers)))
        // What follows is body and trailers, which pass as they are.
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }

    /// `fields` (a request's, pseudo-fields included) as an HTTP/1 head would carry them.
    static func http1Fields(_ fields: HPACKHeaders, endStream: Bool) -> HPACKHeaders {
        var fields = fields
        let cookies = fields["cookie"]
        if cookies.count > 1 {
            fields.remove(name: "cookie")
            fields.add(name: "cookie", value: cookies.joined(separator: "; "))
        }
        let method = fields.first(name: ":method")
        if !endStream, !fields.contains(name: "content-length"), method != "GET", method != "HEAD" {
            fields.add(name: "transfer-encoding", value: "chunked")
        }
        return fields
    }
}
#endif
