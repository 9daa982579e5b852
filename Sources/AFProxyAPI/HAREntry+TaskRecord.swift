import AFProxyModel
import FoundationEssentials

/// A task record as a HAR entry. The sizes are what went to and came from the origin: bodies as
/// relayed, heads as HTTP/1.1 writes the recorded fields. A tunnel is its CONNECT: the request
/// the client made of afproxy, answered 200 once the origin was reached, with the bytes relayed
/// each way as its bodies. A WebSocket handshake's stream task is its GET, answered as the
/// origin answered it (101), with the frames relayed each way as its bodies.
extension HAREntry {
    /// - Parameters:
    ///   - now: a live task's phase in progress runs to now.
    ///   - reasonPhrase: the standard phrase of a status; the origin's own is not recorded.
    ///   - body: a body a record rule kept, read from its file; nil when none was.
    ///   - secrets: the values of `Authorization`, `Proxy-Authorization`, `Cookie` and
    ///     `Set-Cookie` as they are; otherwise `<redacted>` (the sizes stay the real ones).
    package init(
        task: TaskRecord, now: Date, reasonPhrase: (Int) -> String, secrets: Bool = false,
        body: (BodySide) -> [UInt8]? = { _ in nil }
    ) {
        let shown = { (field: HTTPHeaderField) in
            HARNameValue(name: field.name, value: !secrets && field.isSecret ? Self.redacted : field.value)
        }
        let tunnel = task.kind == .stream && task.method == "CONNECT"
        // curl reports the response's version; it sends HTTP/1.1 unless it negotiated 2 or 3.
        let version = task.metrics.httpVersion.map { "HTTP/" + $0 } ?? "HTTP/1.1"
        let requestVersion = version.hasPrefix("HTTP/1.") ? "HTTP/1.1" : version
        // Only HTTP/1's heads are text whose size the fields give; HTTP/2's are compressed.
        let textHeads = version.hasPrefix("HTTP/1.")
        let endMs = task.state == .completed ? task.metrics.totalMs : now.timeIntervalSince(task.createdAt) * 1000
        let timings = HARTimings(
            metrics: task.metrics, endMs: endMs, failureCode: task.errorCode, queued: task.waiting != nil)
        let received = task.responseHeaders ?? []

        // A tunnel's task records `host:port`, which is no URL: consumers parse `url` as an
        // absolute URL (its host, its port), and almost every tunnel through a proxy carries TLS.
        let url = tunnel ? "https://" + task.url : task.url
        let target = tunnel ? task.url : Self.originForm(task.url)
        self.init(
            startedDateTime: Self.timestamp(task.createdAt), time: timings.total,
            request: HARRequest(
                method: task.method, url: url, httpVersion: requestVersion,
                headers: task.requestHeaders.map(shown),
                queryString: tunnel ? [] : Self.query(of: task.url),
                // A tunnel's recorded fields lack what afproxy strips (credentials, hop-by-hop).
                headersSize: textHeads && !tunnel
                    ? Self.headSize("\(task.method) \(target) \(requestVersion)", task.requestHeaders) : -1,
                bodySize: task.upload.completed),
            response: HARResponse(
                status: task.status ?? 0,
                statusText: task.status.map { tunnel ? "Connection established" : reasonPhrase($0) } ?? "",
                httpVersion: task.status == nil ? "" : version,
                headers: received.map(shown),
                content: HARContent(
                    size: task.download.completed, mimeType: received.first("content-type") ?? "x-unknown"),
                redirectURL: received.first("location") ?? "",
                headersSize: textHeads && !tunnel && task.status != nil && task.responseHeaders != nil
                    ? Self.headSize("\(version) \(task.status ?? 0) \(reasonPhrase(task.status ?? 0))", received) : -1,
                bodySize: task.download.completed),
            timings: timings,
            serverIPAddress: task.metrics.remoteAddress.map { Self.split(address: $0).host },
            connection: task.metrics.remoteAddress.flatMap { Self.split(address: $0).port },
            taskId: task.id, kind: task.kind, state: task.state,
            resumes: task.resumes.map { HARResume(offset: $0.offset, at: Self.timestamp($0.at)) },
            client: task.client, failureCode: task.errorCode, error: task.error, file: task.file?.path)
        self.clientProcess = task.clientProcess
        self.edits = task.edits
        self.replayOf = task.replayOf
        self.clientHTTPVersion = task.clientHTTPVersion
        if let recorded = task.bodies?.response, let bytes = body(.response) {
            let (text, encoding) = Self.text(bytes)
            self.response.content.text = text
            self.response.content.encoding = encoding
            self.response.content.comment = Self.cutComment(recorded)
        }
        if let recorded = task.bodies?.request, let bytes = body(.request) {
            let (text, encoding) = Self.text(bytes)
            self.request.postData = HARPostData(
                mimeType: task.requestHeaders.first("content-type") ?? "application/octet-stream", text: text,
                encoding: encoding, comment: Self.cutComment(recorded))
        }
    }

    static let redacted = "<redacted>"

    /// UTF-8 text as it is, other bytes in base64 (HAR's `encoding`).
    static func text(_ bytes: [UInt8]) -> (String, String?) {
        if let text = String(validating: bytes, as: UTF8.self) { return (text, nil) }
        return (Data(bytes).base64EncodedString(), "base64")
    }

    /// Says what is missing from a body kept cut; nil when it is whole.
    static func cutComment(_ body: RecordedBody) -> String? {
        guard body.cut else { return nil }
        return "kept cut: \(body.size) of \(body.seen) bytes (\(body.cutBy ?? "cut"))"
    }

    /// ISO 8601 with milliseconds and the zone, as HAR's examples write it.
    static func timestamp(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }

    /// The bytes of a head: its first line, each field as `Name: value`, every line ended by CRLF,
    /// then the empty line.
    static func headSize(_ firstLine: String, _ fields: HTTPHeaderList) -> Int {
        fields.reduce(firstLine.utf8.count + 4) { $0 + $1.name.utf8.count + 2 + $1.value.utf8.count + 2 }
    }

    /// The request target as it goes to the origin: the path and query of an absolute URL.
    static func originForm(_ url: String) -> String {
        var rest = Substring(url.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)[0])
        if let scheme = rest.firstRange(of: "://") { rest = rest[scheme.upperBound...] }
        guard let start = rest.firstIndex(where: { $0 == "/" || $0 == "?" }) else { return "/" }
        let target = rest[start...]
        return target.hasPrefix("?") ? "/" + target : String(target)
    }

    /// `name=value` pairs of the URL's query, decoded as a form decodes them (`+` is a space).
    static func query(of url: String) -> [HARNameValue] {
        let noFragment = url.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)[0]
        guard let mark = noFragment.firstIndex(of: "?") else { return [] }
        return noFragment[noFragment.index(after: mark)...].split(separator: "&").map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            return HARNameValue(
                name: Self.formDecoded(parts[0]), value: parts.count > 1 ? Self.formDecoded(parts[1]) : "")
        }
    }

    private static func formDecoded(_ text: Substring) -> String {
        var bytes: [UInt8] = []
        var rest = Array(text.utf8)[...]
        while let byte = rest.popFirst() {
            if byte == UInt8(ascii: "%"), rest.count >= 2,
                let value = UInt8(String(decoding: rest.prefix(2), as: UTF8.self), radix: 16)
            {
                bytes.append(value)
                rest = rest.dropFirst(2)
            } else {
                bytes.append(byte == UInt8(ascii: "+") ? UInt8(ascii: " ") : byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `1.2.3.4:80` or `[::1]:80` (as `remoteAddress` has it) into the bare address and the port.
    static func split(address: String) -> (host: String, port: String?) {
        guard let colon = address.lastIndex(of: ":"), address.first == "[" || !address[..<colon].contains(":")
        else { return (address, nil) }
        var host = address[..<colon]
        if host.hasPrefix("[") && host.hasSuffix("]") { host = host.dropFirst().dropLast() }
        let port = address[address.index(after: colon)...]
        return (String(host), port.isEmpty ? nil : String(port))
    }
}

extension HARLog {
    /// One entry per task, oldest first as HAR prefers (by start, then id).
    package init(
        tasks: [TaskRecord], now: Date, reasonPhrase: (Int) -> String, secrets: Bool = false,
        body: (Int, BodySide) -> [UInt8]? = { _, _ in nil },
        messages: (Int) -> WebSocketMessageLog? = { _ in nil }
    ) {
        let ordered = tasks.sorted { ($0.createdAt, $0.id) < ($1.createdAt, $1.id) }
        self.init(
            creator: HARCreator(name: "afproxy", version: AFProxyVersion.current),
            entries: ordered.map { task in
                var entry = HAREntry(task: task, now: now, reasonPhrase: reasonPhrase, secrets: secrets) {
                    body(task.id, $0)
                }
                if task.kind == .stream, let log = messages(task.id) {
                    entry.webSocketMessages = log.messages.map(HARWebSocketMessage.init)
                }
                return entry
            })
    }
}
