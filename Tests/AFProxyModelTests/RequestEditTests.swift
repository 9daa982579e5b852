import Testing

@testable import AFProxyModel

/// What an edit at a hold makes of a request, and what it refuses, without a daemon.
@Suite struct RequestEditTests {
    static let request = ProxyRequest(
        method: "POST", url: "http://api.test:8080/v1/items?page=1",
        headers: [.init("Host", "api.test:8080"), .init("Cookie", "a=1"), .init("X-A", "1"), .init("x-a", "2")],
        body: .length(10), client: "127.0.0.1:5000")

    @Test func eachPartChangesAndIsListed() throws {
        let edit = RequestEdit(
            method: "PUT", target: "/v2/items?x=%20y",
            setHeaders: [.init("X-A", "3"), .init("Authorization", "Bearer t")],
            removeHeaders: ["cookie", "X-Absent"], body: Array("{}".utf8))
        let (edited, changes) = try edit.applied(to: Self.request)
        #expect(edited.method == "PUT")
        #expect(edited.url == "http://api.test:8080/v2/items?x=%20y")
        #expect(edited.host == "api.test")
        #expect(
            edited.headers == [.init("Host", "api.test:8080"), .init("X-A", "3"), .init("Authorization", "Bearer t")])
        #expect(edited.body == .length(2))
        #expect(
            changes.map(\.change) == [
                "method POST → PUT", "path /v1/items?page=1 → /v2/items?x=%20y", "removed header cookie",
                "set header X-A: 3", "set header Authorization: <redacted>", "body replaced (2 bytes)",
            ])
        #expect(changes.allSatisfy { $0.side == .request })
    }

    @Test func anEmptyBodyMakesARequestWithoutOne() throws {
        let (edited, _) = try RequestEdit(body: []).applied(to: Self.request)
        #expect(edited.body == .none && edited.kind == .data)
    }

    @Test func theSameValuesChangeNothing() throws {
        let (edited, changes) = try RequestEdit(method: "POST", target: "/v1/items?page=1").applied(to: Self.request)
        #expect(changes.isEmpty && edited.url == Self.request.url)
    }

    @Test(arguments: [
        (RequestEdit(method: "GET POST"), "not an HTTP method"),
        (RequestEdit(method: "CONNECT"), "cannot be made a CONNECT"),
        (RequestEdit(method: "HEAD"), "a HEAD stays a HEAD"),
        (RequestEdit(target: "v1"), "is not a path and query"),
        (RequestEdit(target: "/a\u{7F}"), "is not a path and query"),
        (RequestEdit(target: "/a#frag"), "is not a path and query"),
        (RequestEdit(setHeaders: [.init("Host", "evil.test")]), "Host is written by the proxy"),
        (RequestEdit(setHeaders: [.init("Bad Name", "x")]), "is not a field"),
        (RequestEdit(setHeaders: [.init("X-A", "a\r\nX-B: b")]), "is not a field"),
        (RequestEdit(removeHeaders: ["Transfer-Encoding"]), "Transfer-Encoding is written by the proxy"),
    ])
    func wrongEditsAreRefused(edit: RequestEdit, reason: String) {
        do {
            _ = try edit.applied(to: Self.request)
            Issue.record("\(edit) was applied")
        } catch {
            #expect(error.message.contains(reason), "\(error.message)")
        }
    }

    @Test func anAnswerIsFramedByItsBody() throws {
        let answer = try ProxyAnswer(status: 503, headers: [.init("Retry-After", "5")], body: Array("down".utf8))
        #expect(answer.head.status == 503 && answer.head.reason == "Service Unavailable")
        #expect(answer.head.headers == [.init("Retry-After", "5"), .init("Content-Length", "4")])
        let empty = try ProxyAnswer(status: 204)
        #expect(empty.head.headers.isEmpty && empty.head.reason == "No Content")
        #expect(throws: RequestEdit.Refusal.self) { try ProxyAnswer(status: 101) }
        #expect(throws: RequestEdit.Refusal.self) { try ProxyAnswer(status: 204, body: [1]) }
        #expect(throws: RequestEdit.Refusal.self) {
            try ProxyAnswer(status: 200, headers: [.init("Content-Length", "9")])
        }
        #expect(try ProxyAnswer(status: 299).head.reason == "")
    }
}

/// What an edit of a held response makes of its head, and what it refuses.
@Suite struct ResponseEditTests {
    static let head = ProxyResponseHead(
        status: 200, reason: "OK", version: "1.1",
        headers: [.init("Content-Type", "text/plain"), .init("Content-Length", "5"), .init("Set-Cookie", "a=1")])

    @Test func statusAndFieldsChange() throws {
        let (edited, changes) = try ResponseEdit(
            status: 404, setHeaders: [.init("Set-Cookie", "b=2"), .init("X-A", "1")], removeHeaders: ["content-type"]
        ).applied(to: Self.head)
        #expect(edited.status == 404 && edited.reason == "Not Found")
        #expect(edited.headers == [.init("Content-Length", "5"), .init("Set-Cookie", "b=2"), .init("X-A", "1")])
        #expect(
            changes.map(\.change) == [
                "status 200 → 404", "removed header content-type", "set header Set-Cookie: <redacted>",
                "set header X-A: 1",
            ])
        #expect(changes.allSatisfy { $0.side == .response })
    }

    @Test func aBodylessStatusNeedsTheBody() throws {
        #expect(throws: RequestEdit.Refusal.self) { try ResponseEdit(status: 204).applied(to: Self.head) }
        #expect(throws: RequestEdit.Refusal.self) { try ResponseEdit(status: 100).applied(to: Self.head) }
        #expect(throws: RequestEdit.Refusal.self) {
            try ResponseEdit(removeHeaders: ["Content-Length"]).applied(to: Self.head)
        }
        let (edited, _) = try ResponseEdit(status: 204, body: []).applied(to: Self.head)
        let answer = try ResponseEdit.answer(edited, body: [])
        #expect(answer.head.status == 204 && !answer.head.headers.contains { $0.hasName("content-length") })
    }

    @Test func aNewBodyIsFramedByItself() throws {
        let answer = try ResponseEdit.answer(Self.head, body: Array("hello world".utf8))
        #expect(answer.head.headers.filter { $0.hasName("content-length") } == [.init("Content-Length", "11")])
        #expect(answer.head.headers.first == .init("Content-Type", "text/plain"))
    }
}
