import AFProxyModel
import FoundationEssentials

/// An HTTP Archive (HAR 1.2) log as plain values: what `GET /v1/har` and `afproxyctl har` give to
/// browser developer tools and HAR viewers, the format people already read network traffic in.
/// Only the fields afproxy can fill truthfully are here; bodies are never recorded, so there is no
/// `content.text` and no `postData`. The mapping from task records is in `HAREntry+TaskRecord`.
package struct HARDocument: Sendable, Codable, Equatable {
    package var log: HARLog

    package init(log: HARLog) {
        self.log = log
    }
}

package struct HARLog: Sendable, Codable, Equatable {
    package var version = "1.2"
    package var creator: HARCreator
    package var entries: [HAREntry]

    package init(creator: HARCreator, entries: [HAREntry]) {
        self.creator = creator
        self.entries = entries
    }
}

package struct HARCreator: Sendable, Codable, Equatable {
    package var name: String
    package var version: String

    package init(name: String, version: String) {
        self.name = name
        self.version = version
    }
}

/// A header, a query parameter: HAR writes both as `{name, value}`. Cookies are not parsed out
/// of the headers (they stay in them), so the cookie lists are always empty lists of this type.
package struct HARNameValue: Sendable, Codable, Equatable {
    package var name: String
    package var value: String

    package init(name: String, value: String) {
        self.name = name
        self.value = value
    }
}

package struct HARRequest: Sendable, Codable, Equatable {
    package var method: String
    package var url: String
    package var httpVersion: String
    package var cookies: [HARNameValue] = []
    package var headers: [HARNameValue]
    package var queryString: [HARNameValue]
    /// Bytes of the request line and fields with their CRLFs and the empty line; -1 when unknown.
    package var headersSize: Int
    package var bodySize: Int64
    package var postData: HARPostData?
}

package struct HARResponse: Sendable, Codable, Equatable {
    /// 0 when no response arrived, as browsers export a request that failed.
    package var status: Int
    package var statusText: String
    package var httpVersion: String
    package var cookies: [HARNameValue] = []
    package var headers: [HARNameValue]
    package var content: HARContent
    package var redirectURL: String
    package var headersSize: Int
    package var bodySize: Int64
}

package struct HARContent: Sendable, Codable, Equatable {
    package var size: Int64
    package var mimeType: String
    /// The body a record rule kept: text as it is, anything else in base64 (`encoding`).
    package var text: String?
    package var encoding: String?
    package var comment: String? = "bodies are not recorded"
}

/// A request body a record rule kept. HAR's `postData` has no `encoding`: a body that is not
/// UTF-8 text carries afproxy's `_encoding: "base64"`.
package struct HARPostData: Sendable, Codable, Equatable {
    package var mimeType: String
    package var text: String
    package var encoding: String?
    package var comment: String?

    private enum CodingKeys: String, CodingKey {
        case mimeType, text
        case encoding = "_encoding"
        case comment
    }
}

/// No cache is involved: HAR's "no information" is an empty object.
package struct HARCache: Sendable, Codable, Equatable {
    package init() {}
}

/// The phases of one round trip in milliseconds, -1 for a phase that did not happen. `ssl` is
/// part of `connect` (HAR 1.2 keeps `connect` as it was in 1.1), so `total`, the entry's `time`,
/// leaves it out. Made from the task's metrics in `HARTimings+TaskMetrics`.
package struct HARTimings: Sendable, Codable, Equatable {
    package var blocked: Double
    package var dns: Double
    package var connect: Double
    package var ssl: Double
    package var send: Double
    package var wait: Double
    package var receive: Double

    package init(
        blocked: Double, dns: Double, connect: Double, ssl: Double, send: Double, wait: Double, receive: Double
    ) {
        self.blocked = blocked
        self.dns = dns
        self.connect = connect
        self.ssl = ssl
        self.send = send
        self.wait = wait
        self.receive = receive
    }

    /// The sum of the phases that happened, `ssl` aside: what HAR requires the entry's `time` to be.
    /// Each phase is whole microseconds, so rounding to them only drops the float sum's noise.
    package var total: Double {
        let phases = [self.blocked, self.dns, self.connect, self.send, self.wait, self.receive]
        return (phases.filter { $0 >= 0 }.reduce(0, +) * 1000).rounded() / 1000
    }
}

/// One continuation of a broken-off response, as `_resumes` lists them.
package struct HARResume: Sendable, Codable, Equatable {
    package var offset: Int64
    package var at: String

    package init(offset: Int64, at: String) {
        self.offset = offset
        self.at = at
    }
}

package struct HAREntry: Sendable, Codable, Equatable {
    package var startedDateTime: String
    package var time: Double
    package var request: HARRequest
    package var response: HARResponse
    package var cache = HARCache()
    package var timings: HARTimings
    package var serverIPAddress: String?
    /// The origin's port: HAR takes any connection id, and a port is what consumers expect there.
    package var connection: String?
    // afproxy's own fields, named with the underscore HAR reserves for a tool's additions.
    package var taskId: Int
    package var kind: TaskKind
    package var state: TaskState
    package var resumes: [HARResume]
    package var client: String
    package var failureCode: String?
    package var error: String?
    package var file: String?
    package var clientProcess: ClientProcess? = nil
    /// What a person changed at a hold (`edit`, `respond`), as the task's `edits`.
    package var edits: [TaskEdit] = []
    /// The task this one sent again (`replay`).
    package var replayOf: Int? = nil
    /// The protocol the client spoke to afproxy (`1.1`, `2`), where `request.httpVersion` is the
    /// one afproxy spoke to the origin: an intercepted browser's h2 streams go upstream as HTTP/1.1
    /// when the origin offers no h2.
    package var clientHTTPVersion: String? = nil
    /// A WebSocket stream task's messages a record rule kept, as Chrome's HAR export writes them:
    /// absent for every other entry.
    package var webSocketMessages: [HARWebSocketMessage]? = nil

    enum CodingKeys: String, CodingKey {
        case startedDateTime, time, request, response, cache, timings, serverIPAddress, connection
        case taskId = "_taskId"
        case kind = "_kind"
        case state = "_state"
        case resumes = "_resumes"
        case client = "_client"
        case failureCode = "_failureCode"
        case error = "_error"
        case file = "_file"
        case clientProcess = "_clientProcess"
        case edits = "_edits"
        case replayOf = "_replayOf"
        case clientHTTPVersion = "_clientHTTPVersion"
        case webSocketMessages = "_webSocketMessages"
    }

    // HAR's optional fields are left out when unknown, as the spec says; afproxy's own are always
    // there, null when empty, as in the task JSON.
    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(self.startedDateTime, forKey: .startedDateTime)
        try container.encode(self.time, forKey: .time)
        try container.encode(self.request, forKey: .request)
        try container.encode(self.response, forKey: .response)
        try container.encode(self.cache, forKey: .cache)
        try container.encode(self.timings, forKey: .timings)
        try container.encodeIfPresent(self.serverIPAddress, forKey: .serverIPAddress)
        try container.encodeIfPresent(self.connection, forKey: .connection)
        try container.encode(self.taskId, forKey: .taskId)
        try container.encode(self.kind, forKey: .kind)
        try container.encode(self.state, forKey: .state)
        try container.encode(self.resumes, forKey: .resumes)
        try container.encode(self.client, forKey: .client)
        try container.encode(self.failureCode, forKey: .failureCode)
        try container.encode(self.error, forKey: .error)
        try container.encode(self.file, forKey: .file)
        try container.encode(self.clientProcess, forKey: .clientProcess)
        try container.encode(self.edits, forKey: .edits)
        try container.encode(self.replayOf, forKey: .replayOf)
        try container.encode(self.clientHTTPVersion, forKey: .clientHTTPVersion)
        try container.encodeIfPresent(self.webSocketMessages, forKey: .webSocketMessages)
    }
}

/// One WebSocket message in the form Chrome's DevTools export it in HAR (`_webSocketMessages`),
/// which HAR viewers read: `type` `send` or `receive`, `time` in seconds since the epoch, the
/// frame's `opcode` number, `data` the text (lossily decoded where a cut split a character) or,
/// for the other opcodes, base64. afproxy adds the message's whole `_size` and whether fewer
/// bytes were kept (`_cut`); `data` is empty where the rule keeps none of that direction.
package struct HARWebSocketMessage: Sendable, Codable, Equatable {
    package var type: String
    package var time: Double
    package var opcode: Int
    package var data: String
    package var size: Int64
    package var cut: Bool

    enum CodingKeys: String, CodingKey {
        case type, time, opcode, data
        case size = "_size"
        case cut = "_cut"
    }

    package init(_ message: WebSocketMessage) {
        self.type = message.direction == .sent ? "send" : "receive"
        self.time = message.at.timeIntervalSince1970
        self.opcode = Int(message.opcode.code)
        let payload = message.payload ?? []
        self.data =
            message.opcode == .text
            ? String(decoding: payload, as: UTF8.self) : Data(payload).base64EncodedString()
        self.size = message.size
        self.cut = message.cut || (message.payload == nil && message.size > 0)
    }
}
