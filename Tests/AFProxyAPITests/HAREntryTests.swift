import AFProxyAPI
import AFProxyModel
import FoundationEssentials
import Testing

/// Task records as HAR entries: request and response, sizes, the tunnel's CONNECT, the JSON.
@Suite struct HAREntryTests {
    private let start = Date(timeIntervalSince1970: 1_795_000_000.125)
    private func phrase(_ status: Int) -> String { status == 200 ? "OK" : status == 302 ? "Found" : "" }

    private func entry(_ task: TaskRecord, now: Date? = nil) -> HAREntry {
        HAREntry(task: task, now: now ?? self.start, reasonPhrase: self.phrase)
    }

    @Test func credentialsAreRedactedUnlessAskedForAndTheSizesStayReal() {
        let task = TaskRecord(
            id: 4, kind: .data, state: .completed, method: "GET", url: "http://h/", client: "127.0.0.1:5000",
            createdAt: self.start, status: 200,
            requestHeaders: [.init("Authorization", "Bearer t"), .init("cookie", "a=b"), .init("Accept", "*/*")],
            responseHeaders: [.init("Set-Cookie", "a=c"), .init("Content-Length", "0")])
        let redacted = self.entry(task)
        #expect(redacted.request.headers.map(\.value) == ["<redacted>", "<redacted>", "*/*"])
        #expect(redacted.response.headers.map(\.value) == ["<redacted>", "0"])
        let shown = HAREntry(task: task, now: self.start, reasonPhrase: self.phrase, secrets: true)
        #expect(shown.request.headers.map(\.value) == ["Bearer t", "a=b", "*/*"])
        #expect(shown.response.headers.map(\.value) == ["a=c", "0"])
        #expect(redacted.request.headersSize == shown.request.headersSize)
    }

    @Test func recordedBodiesAreTextOrBase64WithWhatIsMissing() {
        var task = TaskRecord(
            id: 5, kind: .upload, state: .completed, method: "POST", url: "http://h/u", client: "127.0.0.1:5000",
            createdAt: self.start, status: 200, requestHeaders: [.init("Content-Type", "application/json")])
        task.bodies = RecordedBodies(
            request: RecordedBody(rule: 1, size: 7, seen: 7),
            response: RecordedBody(rule: 1, size: 3, seen: 10, cut: true, cutBy: "limit"))
        let entry = HAREntry(task: task, now: self.start, reasonPhrase: self.phrase) { side in
            side == .request ? Array(#"{"a":1}"#.utf8) : [0xFF, 0x00, 0x01]
        }
        #expect(entry.request.postData?.text == #"{"a":1}"# && entry.request.postData?.encoding == nil)
        #expect(entry.request.postData?.mimeType == "application/json")
        #expect(entry.response.content.text == "/wAB" && entry.response.content.encoding == "base64")
        #expect(entry.response.content.comment == "kept cut: 3 of 10 bytes (limit)")
        #expect(self.entry(task).response.content.comment == "bodies are not recorded")  // no file read
    }

    /// A WebSocket stream task's kept messages, as Chrome's HAR export has them; other entries
    /// have none, and the key is left out for them.
    @Test func webSocketMessagesAreChromesFormAndOnlyOnStreamTasks() throws {
        let stream = TaskRecord(
            id: 6, kind: .stream, state: .completed, method: "GET", url: "http://h/ws", client: "127.0.0.1:5000",
            createdAt: self.start, status: 101)
        let plain = TaskRecord(
            id: 7, kind: .data, state: .completed, method: "GET", url: "http://h/", client: "127.0.0.1:5000",
            createdAt: self.start, status: 200)
        var log = WebSocketMessageLog(limit: 100)
        let at = Date(timeIntervalSince1970: 1_795_000_001.5)
        log.append(.init(direction: .sent, opcode: .text, size: 6, at: at, payload: Array("héllo".utf8), cut: false))
        log.append(.init(direction: .received, opcode: .binary, size: 9, at: at, payload: [0xFF, 0, 1, 2], cut: true))
        log.append(.init(direction: .sent, opcode: .ping, size: 2, at: at, payload: nil, cut: false))
        let har = HARLog(tasks: [stream, plain], now: self.start, reasonPhrase: self.phrase, messages: { _ in log })
        let messages = try #require(har.entries[0].webSocketMessages)
        #expect(messages.map(\.type) == ["send", "receive", "send"] && messages.map(\.opcode) == [1, 2, 9])
        #expect(messages[0].data == "héllo" && !messages[0].cut && messages[0].time == 1_795_000_001.5)
        #expect(messages[1].data == "/wABAg==" && messages[1].cut && messages[1].size == 9)
        #expect(messages[2].data == "" && messages[2].cut)  // none of that direction kept
        #expect(har.entries[1].webSocketMessages == nil)
        let json = String(decoding: try JSONEncoder().encode(har.entries[1]), as: UTF8.self)
        #expect(!json.contains("_webSocketMessages"))
    }

    @Test func dataTaskRequestAndResponse() {
        let task = TaskRecord(
            id: 3, kind: .data, state: .completed, method: "GET", url: "http://h:8080/a/b?x=1&y=a%20b+c&z#frag",
            client: "127.0.0.1:5000", createdAt: self.start, status: 302,
            download: TransferProgress(completed: 10, total: 10),
            metrics: TaskMetrics(
                dnsMs: 1, connectMs: 2, ttfbMs: 4, totalMs: 5, reusedConnection: false,
                remoteAddress: "10.0.0.1:8080", httpVersion: "1.1"),
            requestHeaders: [.init("Host", "h:8080"), .init("Accept", "*/*")],
            responseHeaders: [
                .init("Content-Type", "text/plain; charset=utf-8"), .init("Location", "/next"),
                .init("Content-Length", "10"),
            ])
        let entry = self.entry(task)
        #expect(entry.startedDateTime == "2026-11-18T11:06:40.125Z")
        #expect(entry.time == 5)
        #expect(entry.request.method == "GET")
        #expect(entry.request.url == task.url)
        #expect(entry.request.httpVersion == "HTTP/1.1")
        #expect(entry.request.queryString.map { "\($0.name)=\($0.value)" } == ["x=1", "y=a b c", "z="])
        // "GET /a/b?x=1&y=a%20b+c&z HTTP/1.1\r\n" "Host: h:8080\r\n" "Accept: */*\r\n" "\r\n"
        #expect(entry.request.headersSize == 35 + 14 + 13 + 2)
        #expect(entry.request.bodySize == 0)
        #expect(entry.response.status == 302)
        #expect(entry.response.statusText == "Found")
        #expect(entry.response.redirectURL == "/next")
        #expect(entry.response.content.mimeType == "text/plain; charset=utf-8")
        #expect(entry.response.content.size == 10)
        #expect(entry.response.bodySize == 10)
        // "HTTP/1.1 302 Found\r\n" + 3 fields + "\r\n"
        #expect(entry.response.headersSize == 20 + 41 + 17 + 20 + 2)
        #expect(entry.serverIPAddress == "10.0.0.1")
        #expect(entry.connection == "8080")
        #expect(entry.taskId == 3 && entry.kind == .data && entry.state == .completed)
        #expect(entry.client == "127.0.0.1:5000")
        #expect(entry.failureCode == nil && entry.error == nil && entry.file == nil)
    }

    /// An intercepted browser's h2 stream that went upstream over HTTP/1.1: HAR's versions are the
    /// origin's side, `_clientHTTPVersion` the client's.
    @Test func theClientsProtocolIsBesideTheOrigins() throws {
        var task = TaskRecord(
            id: 4, kind: .data, state: .completed, method: "GET", url: "https://h/", client: "c",
            createdAt: self.start, status: 200, metrics: TaskMetrics(totalMs: 2, httpVersion: "1.1"))
        task.clientHTTPVersion = "2"
        let entry = self.entry(task)
        #expect(entry.request.httpVersion == "HTTP/1.1" && entry.response.httpVersion == "HTTP/1.1")
        #expect(entry.clientHTTPVersion == "2")
        let json = String(decoding: try JSONEncoder().encode(entry), as: UTF8.self)
        #expect(json.contains(#""_clientHTTPVersion":"2""#))
        task.clientHTTPVersion = nil  // a download, a replay: no client
        #expect(
            String(decoding: try JSONEncoder().encode(self.entry(task)), as: UTF8.self)
                .contains(#""_clientHTTPVersion":null"#))
    }

    @Test func uploadCountsTheBodyRelayed() {
        let task = TaskRecord(
            id: 4, kind: .upload, state: .completed, method: "POST", url: "http://h/upload", client: "c",
            createdAt: self.start, status: 200, upload: TransferProgress(completed: 12345, total: 12345),
            metrics: TaskMetrics(totalMs: 1, httpVersion: "1.0"), requestHeaders: [], responseHeaders: [])
        let entry = self.entry(task)
        // curl sent HTTP/1.1; the origin answered in 1.0.
        #expect(entry.request.httpVersion == "HTTP/1.1")
        #expect(entry.response.httpVersion == "HTTP/1.0")
        #expect(entry.request.bodySize == 12345)
        #expect(entry.request.headersSize == "POST /upload HTTP/1.1\r\n\r\n".utf8.count)
        #expect(entry.response.content.mimeType == "x-unknown")
        #expect(entry.response.redirectURL == "")
    }

    @Test func failedTaskWithoutResponse() {
        let task = TaskRecord(
            id: 5, kind: .data, state: .completed, method: "GET", url: "http://127.0.0.1:9/", client: "c",
            createdAt: self.start, error: "connection refused", errorCode: "connection-refused",
            metrics: TaskMetrics(dnsMs: 0.1, totalMs: 0.5))
        let entry = self.entry(task)
        #expect(entry.response.status == 0)
        #expect(entry.response.statusText == "")
        #expect(entry.response.headersSize == -1)
        #expect(entry.response.bodySize == 0)
        #expect(entry.failureCode == "connection-refused")
        #expect(entry.error == "connection refused")
        #expect(entry.serverIPAddress == nil && entry.connection == nil)
        #expect(entry.timings.connect == 0.4)
        #expect(entry.time == 0.5)
    }

    @Test func liveTaskRunsUntilNow() {
        let task = TaskRecord(
            id: 6, kind: .data, state: .suspended, method: "GET", url: "http://h/slow", client: "c",
            createdAt: self.start, status: 200, metrics: TaskMetrics(dnsMs: 1, connectMs: 2, ttfbMs: 3))
        let entry = self.entry(task, now: self.start.addingTimeInterval(2))
        #expect(entry.timings.receive == 1997)
        #expect(entry.time == 2000)
        #expect(entry.state == .suspended)
    }

    @Test func tunnelIsItsConnect() {
        let task = TaskRecord(
            id: 7, kind: .stream, state: .completed, method: "CONNECT", url: "[::1]:8443", client: "c",
            createdAt: self.start, status: 200, upload: TransferProgress(completed: 700),
            download: TransferProgress(completed: 9000),
            metrics: TaskMetrics(
                connectMs: 1, ttfbMs: 2, totalMs: 10, reusedConnection: false,
                remoteAddress: "[::1]:8443"),
            requestHeaders: [.init("Host", "[::1]:8443")], endReason: "client closed")
        let entry = self.entry(task)
        #expect(entry.request.method == "CONNECT")
        #expect(entry.request.url == "https://[::1]:8443")
        #expect(entry.request.queryString.isEmpty)
        #expect(entry.request.headersSize == -1)
        #expect(entry.request.bodySize == 700)
        #expect(entry.response.status == 200)
        #expect(entry.response.statusText == "Connection established")
        #expect(entry.response.headersSize == -1)
        #expect(entry.response.bodySize == 9000)
        #expect(entry.serverIPAddress == "::1")
        #expect(entry.connection == "8443")
        #expect(entry.timings.dns == -1)
        #expect(entry.time == 10)
    }

    @Test func downloadCarriesItsFileAndResumes() {
        var task = TaskRecord(
            id: 8, kind: .download, state: .running, method: "GET", url: "https://h/f.iso", client: "uid 0",
            createdAt: self.start, waiting: "queued",
            resumes: [TaskResume(offset: 4096, at: self.start.addingTimeInterval(1))])
        task.file = DownloadFile(path: "/tmp/f.iso", sha256: nil, keepPartial: false, attempt: 1, maxAttempts: 10)
        let entry = self.entry(task, now: self.start.addingTimeInterval(0.25))
        #expect(entry.file == "/tmp/f.iso")
        #expect(entry.resumes == [HARResume(offset: 4096, at: "2026-11-18T11:06:41.125Z")])
        #expect(entry.timings.blocked == 250)
    }

    @Test func encodesHARShapes() throws {
        let task = TaskRecord(
            id: 9, kind: .data, state: .completed, method: "GET", url: "http://h/", client: "c",
            createdAt: self.start, metrics: TaskMetrics(totalMs: 2))
        let log = HARLog(tasks: [task], now: self.start, reasonPhrase: self.phrase)
        let json = String(decoding: try JSONEncoder().encode(HARDocument(log: log)), as: UTF8.self)
        #expect(json.contains(#""version":"1.2""#))
        #expect(json.contains(#""name":"afproxy""#))
        #expect(json.contains(#""dns":-1,"#) || json.contains(#""dns":-1}"#))
        #expect(json.contains(#""_failureCode":null"#))
        #expect(json.contains(#""_taskId":9"#))
        #expect(json.contains(#""cache":{}"#))
        #expect(!json.contains("serverIPAddress"))
        let decoded = try JSONDecoder().decode(HARDocument.self, from: Data(json.utf8))
        #expect(decoded.log == log)
    }

    @Test func logIsOrderedByStartThenId() {
        func task(_ id: Int, _ offset: Double) -> TaskRecord {
            TaskRecord(
                id: id, kind: .data, state: .completed, method: "GET", url: "http://h/", client: "c",
                createdAt: self.start.addingTimeInterval(offset))
        }
        let log = HARLog(tasks: [task(3, 0), task(1, 1), task(2, 0)], now: self.start, reasonPhrase: self.phrase)
        #expect(log.entries.map(\.taskId) == [2, 3, 1])
    }
}
