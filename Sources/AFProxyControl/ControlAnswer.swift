import AFProxyAPI
import AFProxyModel
import FoundationEssentials
import NIOCore
import NIOHTTP1

/// What an endpoint answers: a whole body, or a stream that lasts as long as its reader.
enum ControlAnswer: Sendable {
    case body(HTTPResponseStatus, contentType: String, ByteBuffer)
    /// One JSON object a line; the handler that writes the lines is made on the connection's event
    /// loop and added behind `ControlHandler`.
    case stream(@Sendable () -> any ChannelHandler)

    /// A value through `Codable` with the API's encoder (`JSONEncoder.api`).
    static func json(_ status: HTTPResponseStatus, _ value: some Encodable) -> ControlAnswer {
        var body = ByteBuffer()
        do {
            body.writeBytes(try JSONEncoder.api().encode(value))
        } catch {
            body.writeString(#"{"error":"cannot encode the response"}"#)
        }
        return .jsonLine(status, body)
    }

    /// Task lists, by far the largest bodies, are written by hand (`TaskRecord+JSON`), byte for
    /// byte what `json` would make of them.
    static func tasks(_ status: HTTPResponseStatus, _ list: TaskList) -> ControlAnswer {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(list.tasks.count * 1024)
        list.writeJSON(to: &bytes)
        return .jsonLine(status, ByteBuffer(bytes: bytes))
    }

    /// One task record, written by hand as in a list.
    static func task(_ status: HTTPResponseStatus, _ record: TaskRecord) -> ControlAnswer {
        var bytes: [UInt8] = []
        record.writeJSON(to: &bytes)
        return .jsonLine(status, ByteBuffer(bytes: bytes))
    }

    /// `{"error": message}`.
    static func error(_ status: HTTPResponseStatus, _ message: String) -> ControlAnswer {
        .json(status, ControlErrorBody(error: message))
    }

    static func refusal(_ refusal: RouteRefusal) -> ControlAnswer {
        .error(HTTPResponseStatus(statusCode: refusal.status), refusal.message)
    }

    private static func jsonLine(_ status: HTTPResponseStatus, _ json: ByteBuffer) -> ControlAnswer {
        var body = json
        body.writeString("\n")
        return .body(status, contentType: "application/json", body)
    }
}
