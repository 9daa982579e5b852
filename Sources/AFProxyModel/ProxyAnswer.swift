/// A response afproxy gives in the origin's place (`afproxyctl respond`): its head, framed by
/// its length, and its whole body.
package struct ProxyAnswer: Sendable, Equatable {
    package var head: ProxyResponseHead
    package var body: [UInt8]

    /// Refuses a status outside 200–599 (an interim or a made-up one), and fields the proxy
    /// frames itself.
    package init(status: Int, headers: HTTPHeaderList = [], body: [UInt8] = []) throws(RequestEdit.Refusal) {
        guard (200...599).contains(status) else {
            throw RequestEdit.Refusal(message: "the status \(status) is not a final HTTP status (200 to 599)")
        }
        var fields: HTTPHeaderList = []
        for field in headers {
            guard field.isWellFormed else {
                throw RequestEdit.Refusal(
                    message:
                        "the header \(field.name) is not a field (a token name, a value without control characters)")
            }
            guard !RequestEdit.fixedFields.contains(field.name.lowercased()) else {
                throw RequestEdit.Refusal(
                    message: "\(field.name) is written by the proxy: it frames the answer by its body")
            }
            fields.append(field)
        }
        if status == 204 || status == 304 {
            // No body, and no length: a 304's would be that of the representation (RFC 9110 §8.6).
            guard body.isEmpty else { throw RequestEdit.Refusal(message: "a \(status) answer has no body") }
        } else {
            fields.append(HTTPHeaderField("Content-Length", String(body.count)))
        }
        self.head = ProxyResponseHead(status: status, reason: Self.reason(status), version: "1.1", headers: fields)
        self.body = body
    }

    /// The reason phrases of the common statuses; others get none, which HTTP allows. A table of
    /// our own: the model depends on no NIO module, whose `HTTPResponseStatus` has them all.
    package static func reason(_ status: Int) -> String {
        switch status {
        case 200: "OK"
        case 201: "Created"
        case 202: "Accepted"
        case 204: "No Content"
        case 301: "Moved Permanently"
        case 302: "Found"
        case 304: "Not Modified"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 409: "Conflict"
        case 429: "Too Many Requests"
        case 500: "Internal Server Error"
        case 502: "Bad Gateway"
        case 503: "Service Unavailable"
        case 504: "Gateway Timeout"
        default: ""
        }
    }
}
