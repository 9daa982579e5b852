import AFProxyModel
import FoundationEssentials

/// Whether a proxied GET that the origin broke off may be continued where it stopped, so that
/// the client sees one intact response, and whether the origin's answer to that continuation
/// really is the rest of the same response. A plain value the task feeds from its transfers.
///
/// Only when the first answer made it safe: a 200 that announced `Accept-Ranges: bytes`, its
/// length, and a strong validator — a strong `ETag`, or a `Last-Modified` at least 60 s older
/// than the answer (RFC 9110 §8.8.2.2: a date that recent may not tell two versions apart). The
/// continuation must be a 206 from exactly the offset reached, of the same length and validator;
/// anything else ends the client's response short, as a break would have, never spliced.
package struct TransparentResume: Sendable, Equatable {
    /// Continuations a task may make at most.
    package let limit: Int
    private var validator: ResourceValidator?
    private var total: Int64?
    /// Body bytes of the response received so far, from every transfer.
    package private(set) var received: Int64 = 0
    package private(set) var resumes: [TaskResume] = []
    /// The offset the running continuation asked for; nil while the first transfer runs.
    package private(set) var continuing: Int64?
    /// The first answer did not allow a continuation, or one was refused: no more.
    private var closed = false

    /// Nil for a request whose response is not to be continued: not a GET, or one the client
    /// made conditional or partial itself.
    package init?(method: String, headers: HTTPHeaderList, limit: Int) {
        guard limit > 0, method == "GET",
            headers.first("range") == nil, headers.first("if-range") == nil
        else { return nil }
        self.limit = limit
    }

    /// The first transfer's final head: whether its response can be continued is decided here.
    package mutating func firstHead(_ head: ProxyResponseHead, now: Date) {
        guard self.continuing == nil else { return }
        guard head.status == 200, let length = head.contentLength,
            head.headers.contains(where: { $0.hasName("accept-ranges") && Self.mentionsBytes($0.value) }),
            let validator = ResourceValidator(headers: head.headers), Self.isStrong(validator, head, now: now)
        else {
            self.closed = true
            return
        }
        self.validator = validator
        self.total = length
    }

    /// Whether an `Accept-Ranges` value holds `bytes`, in any case: compared on the UTF-8 view,
    /// as a lower-cased copy and Foundation's substring search cost a few microseconds a response.
    /// (`| 0x20` folds only the letters of `bytes` to themselves: no other byte becomes one.)
    static func mentionsBytes(_ value: String) -> Bool {
        let bytes = value.utf8
        var start = bytes.startIndex
        while bytes.distance(from: start, to: bytes.endIndex) >= Self.bytesUnit.count {
            if zip(bytes[start...], Self.bytesUnit).allSatisfy({ $0 | 0x20 == $1 }) { return true }
            start = bytes.index(after: start)
        }
        return false
    }

    private static let bytesUnit = Array("bytes".utf8)

    package mutating func bodyReceived(_ count: Int) {
        self.received += Int64(count)
    }

    /// A transfer failed: the request for the rest, or nil when the response cannot be continued
    /// (the first answer did not allow it, the limit is reached, nothing or everything arrived,
    /// or the failure is not the network's or the origin's).
    package mutating func next(after failure: TaskFailure) -> DownloadStateMachine.RangeRequest? {
        guard !self.closed, failure.isRetryable, let validator = self.validator, let total = self.total,
            self.resumes.count < self.limit, self.received > 0, self.received < total
        else { return nil }
        self.continuing = self.received
        return .init(offset: self.received, ifRange: validator.ifRange)
    }

    /// The continuation's head: true when it is the rest of the same response (recorded as a
    /// resume), false when it is not (and no further continuation is tried).
    package mutating func continuation(_ head: ProxyResponseHead, now: Date) -> Bool {
        guard let offset = self.continuing, let validator = self.validator else { return false }
        guard head.status == 206, let range = head.headers.first("content-range").flatMap(ContentRange.init),
            range.first == offset, range.completeLength == self.total, validator.matches(head.headers)
        else {
            self.closed = true
            return false
        }
        self.resumes.append(TaskResume(offset: offset, at: now))
        return true
    }

    /// A `Last-Modified` validator is strong only if the resource had not changed for 60 s when
    /// the answer was made (its `Date`, else now).
    private static func isStrong(_ validator: ResourceValidator, _ head: ProxyResponseHead, now: Date) -> Bool {
        guard case .lastModified(let text) = validator else { return true }
        guard let modified = HTTPDate.parse(text) else { return false }
        let answered = head.headers.first("date").flatMap(HTTPDate.parse) ?? Int(now.timeIntervalSince1970)
        return answered - modified >= 60
    }
}
