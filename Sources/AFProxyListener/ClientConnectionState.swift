import AFProxyModel
import NIOCore
import NIOHTTP1

/// What one client connection decides, as a plain value: where it is in its request/response
/// cycle, what arrived before the current exchange ended (pipelined requests, a malformed one),
/// and what holds its reads back. `ProxyConnectionHandler` feeds it what the channel and the
/// task report and performs what it answers (writes, the task's calls, `read()`), so that the
/// ordering rules are tested without a channel.
///
/// Generic over the task so that a test can use a plain object: only identity matters here.
struct ClientConnectionState<Task: AnyObject> {
    enum ReadHold: Hashable {
        /// The task's request body buffer is full.
        case backpressure
        /// A person suspended the task.
        case suspended
        /// A request arrived before the current exchange ended: nothing more is read until it
        /// is answered.
        case pipelined
        /// The parser failed: nothing after the malformed request can be read.
        case malformed
    }

    /// What the channel delivers: a part of a request, or the parser's refusal of one.
    enum Input {
        case part(HTTPServerRequestPart)
        case malformed(ProxyRefusal)
    }

    struct Exchange {
        var task: Task
        var version: HTTPVersion
        var keepAlive: Bool
        var requestEnded = false
        var responseStarted = false
        /// The client sent `Expect: 100-continue` and has not been told to go on yet: it gets
        /// the origin's 100, or ours once curl is ready for the body (never both).
        var awaitsContinue = false
        /// A 100 went to the client, the origin's or ours: no second one follows.
        var continueSent = false
        /// How the response body is framed for the client, once its head went out.
        var framing = ClientResponseHead.Framing.none

        init(task: Task, version: HTTPVersion, keepAlive: Bool, awaitsContinue: Bool = false) {
            self.task = task
            self.version = version
            self.keepAlive = keepAlive
            self.awaitsContinue = awaitsContinue
        }
    }

    enum Phase {
        case idle
        case forwarding(Exchange)
        /// A refused request's body is being dropped until its end; then the refusal is written.
        case refusing(ProxyRefusal, HTTPVersion)
        /// A CONNECT head arrived; at its end the connection is handed to a `ConnectHandler`.
        case tunnel(ConnectHandler.Plan, HTTPVersion)
        case closed
    }

    private(set) var phase = Phase.idle
    /// The request being answered is a HEAD: an answer of our own then has no body either.
    private(set) var answeringHead = false
    private(set) var holds: Set<ReadHold> = []
    /// A `read()` was held back; it goes through once nothing holds it.
    private var readPending = false
    /// Inputs that arrived before the current exchange ended; nil while there are none, which is
    /// nearly always: an empty ring would still hold storage for 16 inputs (about 1 KiB) for the
    /// life of every keep-alive connection.
    private var queued: CircularBuffer<Input>?

    // MARK: input

    /// Answers whether `input` is to be handled now; otherwise it was queued behind the current
    /// exchange (or dropped, on a closed connection).
    mutating func receive(_ input: Input) -> Bool {
        // A closing connection reads on only to drop what still comes (`close()`).
        if case .closed = self.phase { return false }
        if case .malformed = input { self.holds.insert(.malformed) }
        if self.canHandleNow && self.queued == nil { return true }
        if self.queued == nil { self.queued = CircularBuffer(initialCapacity: 4) }
        self.queued!.append(input)
        self.holds.insert(.pipelined)
        return false
    }

    /// No input waits behind the current exchange, and nothing holds the client's reads.
    var queueIsEmpty: Bool { self.queued == nil && self.holds.isEmpty }

    /// The next queued input that can be handled now, in order.
    mutating func nextQueued() -> Input? {
        guard self.canHandleNow, let next = self.queued?.popFirst() else { return nil }
        if self.queued?.isEmpty == true { self.queued = nil }
        return next
    }

    /// The part can go to the current request (its body and end), or starts a request while
    /// the connection is idle.
    private var canHandleNow: Bool {
        switch self.phase {
        case .idle, .refusing, .tunnel: true
        case .forwarding(let exchange): !exchange.requestEnded
        case .closed: false
        }
    }

    // MARK: the request

    /// A request head, while idle: `isHead` says our own answers carry no body.
    mutating func requestStarted(isHead: Bool) {
        self.answeringHead = isHead
    }

    mutating func forward(_ exchange: Exchange) {
        self.phase = .forwarding(exchange)
    }

    mutating func refuseAfterBody(_ refusal: ProxyRefusal, version: HTTPVersion) {
        self.phase = .refusing(refusal, version)
    }

    mutating func openTunnelAtEnd(_ plan: ConnectHandler.Plan, version: HTTPVersion) {
        self.phase = .tunnel(plan, version)
    }

    /// The task that takes the request body now, if any.
    var bodyTarget: Task? {
        guard case .forwarding(let exchange) = self.phase, !exchange.requestEnded else { return nil }
        return exchange.task
    }

    enum RequestEnd {
        case none
        /// The request body is complete: tell the task.
        case finishBody(Task)
        /// The refused request's body is dropped: write the refusal.
        case refuse(ProxyRefusal, HTTPVersion)
        /// The CONNECT is complete: hand the connection over (this handler is done).
        case takeOver(ConnectHandler.Plan, HTTPVersion)
    }

    mutating func requestEnded() -> RequestEnd {
        switch self.phase {
        case .forwarding(var exchange):
            exchange.requestEnded = true
            self.phase = .forwarding(exchange)
            return .finishBody(exchange.task)
        case .refusing(let refusal, let version):
            return .refuse(refusal, version)
        case .tunnel(let plan, let version):
            self.phase = .closed
            return .takeOver(plan, version)
        case .idle, .closed:
            return .none
        }
    }

    enum MalformedAnswer {
        case none
        /// The response to the current request started: its task ends and the connection
        /// closes before the response's end, so the client sees it truncated.
        case abortAndClose(Task)
        /// Answer `refusal` (and close); `task`, if any, ends first.
        case refuse(ProxyRefusal, HTTPVersion, ending: Task?)
    }

    /// The parser failed on the current request (its body) or on the next one: answer unless a
    /// response already started, and close either way.
    mutating func malformed(_ refusal: ProxyRefusal) -> MalformedAnswer {
        var refusal = refusal
        refusal.closeConnection = true
        switch self.phase {
        case .forwarding(let exchange) where exchange.responseStarted:
            self.close()
            return .abortAndClose(exchange.task)
        case .forwarding(let exchange):
            return .refuse(refusal, exchange.version, ending: exchange.task)
        case .refusing(_, let version), .tunnel(_, let version):
            return .refuse(refusal, version, ending: nil)
        case .idle:
            self.answeringHead = false  // the malformed request is the one answered
            return .refuse(refusal, .http1_1, ending: nil)
        case .closed:
            return .none
        }
    }

    // MARK: the response

    /// The exchange of `task`, if it is the current one (a late delivery finds none).
    func exchange(of task: Task) -> Exchange? {
        guard case .forwarding(let exchange) = self.phase, exchange.task === task else { return nil }
        return exchange
    }

    /// Our own `100 Continue` for `task`'s client, once curl is ready for the body: answers
    /// whether to write it (once, to a client that waits for one, before its response started
    /// and while its body is still to come).
    mutating func continueWanted(for task: Task) -> Bool {
        guard case .forwarding(var exchange) = self.phase, exchange.task === task, exchange.awaitsContinue,
            !exchange.continueSent, !exchange.responseStarted, !exchange.requestEnded
        else { return false }
        exchange.awaitsContinue = false
        exchange.continueSent = true
        self.phase = .forwarding(exchange)
        return true
    }

    /// The origin's `100 Continue` for `task`: answers whether it goes on. A proxy forwards every
    /// 1xx it did not ask for itself (RFC 9110 §15.2), and afproxy never asks the origin for a
    /// 100 (curl's own `Expect` is turned off), so it goes whether or not the client sent
    /// `Expect`; but only once per exchange, and not after ours.
    mutating func forwardsContinue(for task: Task) -> Bool {
        guard case .forwarding(var exchange) = self.phase, exchange.task === task, !exchange.continueSent,
            !exchange.responseStarted
        else { return false }
        exchange.awaitsContinue = false
        exchange.continueSent = true
        self.phase = .forwarding(exchange)
        return true
    }

    mutating func responseStarted(framing: ClientResponseHead.Framing, closeAfter: Bool) {
        guard case .forwarding(var exchange) = self.phase else { return }
        exchange.responseStarted = true
        exchange.awaitsContinue = false
        exchange.framing = framing
        if closeAfter { exchange.keepAlive = false }
        self.phase = .forwarding(exchange)
    }

    enum ExchangeEnd: Equatable {
        /// The connection takes the next request.
        case keepOpen
        /// The connection closes once the response is written (`close()`).
        case close
    }

    /// The response ended in full: answers what becomes of the connection.
    mutating func exchangeEnded() -> ExchangeEnd {
        guard case .forwarding(let exchange) = self.phase, exchange.keepAlive, exchange.requestEnded else {
            self.close()
            return .close
        }
        self.phase = .idle
        self.holds.formIntersection([.malformed])  // the parser cannot go on past a failure
        return .keepOpen
    }

    /// A refusal of ours was written, after which the connection closes or takes the next request.
    mutating func refusalWritten(closing: Bool) {
        if closing { return self.close() }
        self.phase = .idle
        self.holds.formIntersection([.malformed])
    }

    /// The connection closes once what was written goes out. Until the client closes too, what it
    /// still sends (a request body the answer made moot, requests pipelined behind) is read and
    /// dropped: nothing holds the reads, and no input is handled or queued any more.
    mutating func close() {
        self.phase = .closed
        self.holds = []
        self.queued = nil
    }

    /// The channel closed: the task of an exchange still running ends.
    mutating func channelClosed() -> Task? {
        defer { self.phase = .closed }
        guard case .forwarding(let exchange) = self.phase else { return nil }
        return exchange.task
    }

    // MARK: reads

    /// `read()` came down the pipeline: answers whether it goes through now.
    mutating func read() -> Bool {
        guard self.holds.isEmpty else {
            self.readPending = true
            return false
        }
        return true
    }

    /// `task`'s request body buffer is full, or `task` was suspended: hold reads (only for the
    /// current exchange's task).
    mutating func hold(_ reason: ReadHold, for task: Task) {
        guard self.exchange(of: task) != nil else { return }
        self.holds.insert(reason)
    }

    /// Answers whether a held `read()` is to be issued now.
    mutating func release(_ reason: ReadHold, for task: Task) -> Bool {
        guard self.exchange(of: task) != nil else { return false }
        self.holds.remove(reason)
        return self.takePendingRead()
    }

    /// After queued inputs were handled: answers whether a held `read()` is to be issued now.
    mutating func queueDrained() -> Bool {
        if self.queued == nil {
            self.holds.remove(.pipelined)
        } else {
            self.holds.insert(.pipelined)
        }
        return self.takePendingRead()
    }

    private mutating func takePendingRead() -> Bool {
        guard self.holds.isEmpty, self.readPending else { return false }
        self.readPending = false
        return true
    }
}
