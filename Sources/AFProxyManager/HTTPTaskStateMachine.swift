import AFProxyModel
import AFProxyTransport
import FoundationEssentials
import NIOCore

/// Everything an HTTP task decides, as one plain value: its state (running, suspended,
/// canceling, completed), the request body waiting for curl, and the response bytes on their way
/// to the client with the window that bounds them. `HTTPTask` feeds it every event — the verbs,
/// curl's callbacks, the client's writes — under one lock, and performs the actions it answers;
/// nothing else keeps a copy of this state, so suspension and backpressure cannot disagree.
///
/// Events that happen for every chunk of a body answer what the caller needs there and then
/// (`BodyReceipt`, `RequestBodyRead`, whether to read the client further); the others answer an
/// `Action`.
///
/// # Which side's end ends the task
///
/// A task has three parties that can finish: curl's transfer (the upstream exchange), the
/// response (whole once its last byte arrived from upstream), and the client (its request body,
/// and its connection). Every order in which they finish ends the task, and releases its curl
/// handle and upstream socket:
///
/// | what happened | who ends the task | how it ends |
/// |---|---|---|
/// | curl's transfer ended (success or failure), whatever else | curl's end | as curl says |
/// | a person canceled | the abort | canceled |
/// | the client left before it had the whole response | the client's close | canceled, `client-closed` |
/// | the client left after the whole response, its request body complete | curl's end (it has every byte it needs to send) | as curl says |
/// | the whole response came before the request body was complete, whatever its status and whatever the client does (stays, stays silent, leaves) | the response's end | completed |
/// | the origin closed its connection while the request body was still to come (curl waits for the client and never notices) | the session loop, which sees the close | completed if the response before it was whole (it may end with the close), else failed `upstream-broken` |
///
/// The fifth row mirrors what curl itself does (it stops sending after an early error answer
/// and closes that connection), and what Squid does after any early answer: curl 7.88 never
/// ends a transfer whose send side it had paused waiting for the client, so without the row a
/// client that reads an early answer and then holds or drops its connection without sending the
/// body kept a task and an upstream socket forever. A success gets no exception: once the
/// response is whole, nothing the client still sends can change it, and an origin that answered
/// 200 and closed left the task running as long as its client stayed. The client's connection
/// is then half-closed and drained for a moment (`ClientConnectionState.ExchangeEnd`). A task
/// stopped by row five ends as completed: the client got the whole response, and the record
/// still shows how much of the request body went up.
struct HTTPTaskStateMachine {
    enum Action: Equatable {
        case none
        /// Pause the transfer both ways, hold the client's reads, publish `suspended`.
        case suspend
        /// Continue the transfer both ways, release the client's reads, publish `resumed`.
        case resume
        /// Abort the transfer with `failure`; its completion follows.
        case abort(TaskFailure)
        /// curl waited for request bytes and some are there (or the body ended): let it send.
        case continueSending
        /// The client drained its window: apply `resize` to the window (the budget may refuse a
        /// growth), then let curl receive again.
        case continueReceiving(resize: ReceiveWindow.Change)
        /// The request body waiting for curl fell below its low watermark: read the client again.
        case readClient
        /// curl is ready for the request body and has none yet: a client waiting for
        /// `100 Continue` is to get it now.
        case askForBody
        /// Record the end, answer the client, publish `completed`, leave the registry, and
        /// give `release` bytes back to the budget.
        case finish(UpstreamResult, release: Int)
        /// As `finish`, with the answer a person gave in the origin's place (`respond`) as the
        /// response: the transfer never started.
        case finishAnswered(release: Int)
        /// Start the upstream transfer (`begin`, or the release of a held task).
        case start
        /// A hold rule caught the task: hold the client's reads, publish `held`; the transfer is
        /// not started until the task is released.
        case hold(rule: Int)
        /// A person resumed a held task: when `start`, start the transfer and release the
        /// client's reads (false when `begin` has not run yet: it starts the task then); publish
        /// `resumed`.
        case release(start: Bool)
        /// The origin broke the response off and it may be continued: hand the client what
        /// arrived, then start a new transfer for the rest (`Range`, `If-Range`).
        case requestRest(DownloadStateMachine.RangeRequest)
        /// A response hold caught the task at the origin's head: pause the transfer, hold what
        /// is gathered for the client, publish `held`.
        case holdResponse(rule: Int)
        /// A person released a response hold: publish `resumed`, then continue the transfer, or,
        /// when it ended while held, finish with its result (`finish`'s work).
        case releaseResponse(finish: UpstreamResult?, release: Int)
    }

    /// What a final head was: the first response's, or a continuation's (the rest of the same
    /// response, or not: then stop its transfer with `failure`, and drop its bytes).
    enum FinalHead: Equatable {
        case first
        case continued
        case notTheRest(TaskFailure)
    }

    private(set) var state: TaskState = .running
    /// What the task failed with, set in the step that completes it: a record read between that
    /// step and the task's finishing work never shows `completed` without its reason.
    private(set) var failure: TaskFailure?
    /// The request body read from the client and not yet taken by curl.
    private(set) var upload = UploadQueue()
    private(set) var window = ReceiveWindow()
    /// Response bytes handed to the client's event loop and not yet written to its socket.
    private(set) var inFlight = 0
    /// Response bytes written to the client's socket so far: a window grows only once a client
    /// proved it keeps up over a good stretch.
    private(set) var clientWritten: Int64 = 0
    /// When curl paused receiving because the window was full, nil while it receives: how long
    /// the client then takes to drain says whether it keeps up.
    private(set) var receiveBlockedSince: ContinuousClock.Instant?
    /// The hold rule that keeps the transfer from starting; nil when none caught the task, and
    /// once it is released.
    private(set) var heldBy: Int?
    /// Whether `begin` ran: until then the task is registered but its transfer not started.
    private var begun = false
    /// The length of the response body once all of it arrived from upstream; nil until then.
    private(set) var responseLength: Int64?
    /// The transfer is being stopped because the request body can no longer (or need no longer)
    /// be sent after a whole response: its end completes the task whatever curl says of it.
    private(set) var stoppedAfterResponse = false
    /// The client connection is gone (`clientClosed`): the safety net looks only at such tasks.
    private(set) var clientGone = false
    /// curl was refused request bytes once already: the first refusal asks the client for them
    /// (a client that sent `Expect: 100-continue` waits for that before it sends any).
    private var askedForBody = false
    /// Whether the response may be continued after a break, and the continuation under way;
    /// nil for a request whose response is never continued.
    private(set) var continuation: TransparentResume?
    /// The break a continuation follows: what the task ends with when the origin's answer is not
    /// the rest of the same response.
    private var breakFailure: TaskFailure?
    /// The bytes arriving belong to a continuation that is not the rest: they are dropped.
    private(set) var discarding = false
    /// Why the continuation was refused: what the task ends with, even when the refused
    /// transfer completes before the cancel reaches it.
    private var refusal: TaskFailure?
    /// The body length the final head declared (nil when it declared none), and the body bytes
    /// taken from every transfer: a transfer's success with fewer is a truncation, never a
    /// complete response.
    private var declaredLength: Int64?
    private(set) var bodyTaken: Int64 = 0
    /// A person replaced the request body at the hold: the client's own is read and dropped.
    private(set) var clientBodyIgnored = false
    /// A person answered the held request (`respond`), or a map-local rule's file did: the
    /// transfer's end, which its cancel brings, completes the task with that answer.
    private(set) var answered = false
    /// A map-local rule answers the task: its transfer never starts, and the file's answer
    /// (`answerLocally`) ends it.
    private let answersLocally: Bool
    /// `heldBy` holds the task at its response (the origin's head came), not before its start.
    private(set) var heldAtResponse = false
    /// The transfer ended while the response was held: the end the release finishes with.
    private var endWhileHeld: UpstreamResult?
    /// The task ended (canceled) while its response was held: the client gets the cancel's
    /// answer, never the held head.
    private(set) var heldResponseDropped = false

    /// `heldBy`: the hold rule that caught the task, which is then created suspended (no byte
    /// goes upstream until a resume). `continuation`: how a broken response may be continued.
    init(heldBy rule: Int? = nil, continuation: TransparentResume? = nil, answersLocally: Bool = false) {
        self.answersLocally = answersLocally
        if let rule {
            self.state = .suspended
            self.heldBy = rule
        }
        self.continuation = continuation
    }

    /// Once the task is registered and `created` published: start the transfer, or wait as
    /// held. The transfer is started even when a person suspended or canceled the task in
    /// between: the session applies the pause (or finishes the canceled transfer) as it always
    /// did.
    mutating func begin() -> Action {
        guard !self.begun else { return .none }
        self.begun = true
        guard !self.answered, !self.answersLocally else { return .none }
        if let rule = self.heldBy { return self.state == .suspended ? .hold(rule: rule) : .none }
        return .start
    }

    // MARK: verbs

    mutating func suspend() throws(IllegalTransition) -> Action {
        try self.state.apply(.suspend)
        return .suspend
    }

    mutating func resume() throws(IllegalTransition) -> Action {
        try self.state.apply(.resume)
        // The resume continues both directions; a window drained while suspended needs no
        // continue of its own, and one still full pauses again at curl's next bytes.
        self.receiveBlockedSince = nil
        guard self.heldBy != nil else { return .resume }
        self.heldBy = nil
        guard self.heldAtResponse else { return .release(start: self.begun) }
        self.heldAtResponse = false
        guard let end = self.endWhileHeld else { return .releaseResponse(finish: nil, release: 0) }
        return .releaseResponse(
            finish: self.end(with: self.stoppedAfterResponse ? .success : self.checked(end)),
            release: self.window.reserved)
    }

    mutating func cancel(_ failure: TaskFailure) throws(IllegalTransition) -> Action {
        try self.state.apply(.cancel)
        if self.heldAtResponse, self.endWhileHeld != nil {
            // Its transfer ended while held: no end of it is to come, the cancel ends the task.
            self.heldResponseDropped = true
            return .finish(self.end(with: .failure(failure)), release: self.window.reserved)
        }
        return .abort(failure)
    }

    // MARK: edits at the hold

    /// Only a request a hold rule stopped before it went upstream can be changed (`verb`: what
    /// the person asked for, for the refusal).
    func mayEdit(_ verb: String) throws(IllegalTransition) {
        if self.heldAtResponse {
            throw IllegalTransition(
                verb: verb, state: self.state,
                reason:
                    "it is held at its response: the request went already (edit the response: --status, --header, --body)"
            )
        }
        guard self.heldBy != nil, self.state == .suspended else {
            let reason =
                self.state == .suspended
                ? "it is suspended, not held: only a request a hold rule stopped before it went upstream can be changed"
                : nil
            throw IllegalTransition(verb: verb, state: self.state, reason: reason)
        }
    }

    /// The held request was edited (`mayEdit` allowed it, under the same lock): `continuation` is
    /// how its response may now be continued, and `body`, when given, replaces the client's
    /// (which is then read and dropped).
    mutating func requestEdited(continuation: TransparentResume?, body: ByteBuffer?) {
        self.continuation = continuation
        guard let body else { return }
        self.upload = UploadQueue()
        _ = self.upload.append(body)
        self.upload.ended = true
        self.clientBodyIgnored = true
    }

    /// A person answers the held request in the origin's place: the transfer, never started, is
    /// ended, and its end completes the task with the answer (`finishAnswered`).
    mutating func answer() throws(IllegalTransition) -> Action {
        if self.heldAtResponse {
            try self.mayEditResponse()
            // The origin's response is dropped: it stays paused (suspended: no byte of it is
            // taken) until its transfer's end, or has ended already.
            self.answered = true
            guard self.endWhileHeld != nil else { return .abort(.canceled("answered by afproxy")) }
            self.state = .completed
            return .finishAnswered(release: self.window.reserved)
        }
        try self.mayEdit("respond to")
        try self.state.apply(.resume)
        self.heldBy = nil
        self.answered = true
        return .abort(.canceled("answered by afproxy"))
    }

    /// A person may change the held response (status, fields) before the client gets it.
    func mayEditResponse() throws(IllegalTransition) {
        guard self.heldAtResponse, self.state == .suspended else {
            throw IllegalTransition(
                verb: "edit the response of", state: self.state,
                reason: self.heldBy != nil
                    ? "it is held before its request went: there is no response yet (edit the request)" : nil)
        }
    }

    /// The origin's final head came (the session thread): a response hold caught the task, which
    /// waits, its transfer paused, until a person releases, edits, answers or cancels it. Not
    /// when a person suspended or canceled it already.
    mutating func holdResponse(rule: Int) -> Action {
        guard self.state == .running else { return .none }
        self.state = .suspended
        self.heldBy = rule
        self.heldAtResponse = true
        return .holdResponse(rule: rule)
    }

    /// A map-local rule's answer is ready: the transfer, never started, is ended, and its end
    /// completes the task with the answer; nothing when a person canceled the task meanwhile.
    mutating func answerLocally() -> Action {
        guard self.answersLocally, !self.answered, self.state == .running || self.state == .suspended else {
            return .none
        }
        self.answered = true
        return .abort(.canceled("answered by afproxy"))
    }

    /// The client cannot be given the response: the task ends with `failure` unless it is
    /// ending already.
    mutating func clientFailed(_ failure: TaskFailure) -> Action {
        (try? self.cancel(failure)) ?? .none
    }

    /// The client's connection closed (rows three to five of the table above: a whole response
    /// with the request body unfinished was stopped at its end already).
    mutating func clientClosed() -> Action {
        self.clientGone = true
        guard self.state != .completed else { return .none }
        guard let length = self.responseLength, self.clientWritten >= length else {
            return self.clientFailed(.clientClosed("canceled: client closed the connection"))
        }
        // It had every byte and closed because it was done, maybe before curl's own end reached
        // this task (under load, or after a transparent resume).
        return self.upload.ended ? .none : self.stopAfterResponse()
    }

    /// Ends the transfer of a task whose whole response arrived; its end completes the task.
    private mutating func stopAfterResponse() -> Action {
        guard !self.stoppedAfterResponse, self.state == .running || self.state == .suspended else { return .none }
        self.stoppedAfterResponse = true
        return .abort(.clientClosed("the request body was not sent: the response came whole before it"))
    }

    // MARK: the request body (the client's event loop, and curl)

    /// Answers whether the client may be read further; when not, a `.readClient` follows once
    /// curl took enough.
    mutating func requestBodyArrived(_ buffer: ByteBuffer) -> (keepReading: Bool, action: Action) {
        guard !self.clientBodyIgnored else { return (true, .none) }
        let keepReading = self.upload.append(buffer)
        return (keepReading, self.wakeSender())
    }

    mutating func requestBodyEnded() -> Action {
        guard !self.clientBodyIgnored else { return .none }
        self.upload.ended = true
        return self.wakeSender()
    }

    /// curl waits for request bytes: they are there now. Not while suspended: the resume lets
    /// curl send again.
    private mutating func wakeSender() -> Action {
        guard self.upload.curlWaiting, self.state == .running else { return .none }
        self.upload.curlWaiting = false
        return .continueSending
    }

    /// curl asks for request bytes (the session thread).
    mutating func fillRequestBody(_ buffer: UnsafeMutableRawBufferPointer) -> (RequestBodyRead, Action) {
        guard self.state == .running else { return (.pause, .none) }
        if self.upload.bytes == 0 {
            if self.upload.ended { return (.end, .none) }
            self.upload.curlWaiting = true
            guard !self.askedForBody else { return (.pause, .none) }
            self.askedForBody = true
            return (.pause, .askForBody)
        }
        self.askedForBody = true
        self.upload.curlWaiting = false
        let count = self.upload.drain(into: buffer)
        guard self.upload.readerStopped && self.upload.bytes < UploadQueue.lowWatermark else {
            return (.bytes(count), .none)
        }
        self.upload.readerStopped = false
        return (.bytes(count), .readClient)
    }

    /// curl sends the request again on a fresh connection: the count of bytes handed out again,
    /// or nil when they are no longer kept.
    mutating func rewindRequestBody() -> Int? {
        self.upload.rewind()
    }

    /// The response head arrived: the request will not be sent again, so what was sent of its
    /// body need not be kept.
    mutating func responseHeadArrived() {
        self.upload.forgetSent()
    }

    /// The final head of the running transfer: the response's, or a continuation's.
    mutating func finalHeadArrived(_ head: ProxyResponseHead, now: Date) -> FinalHead {
        if var continuation = self.continuation, continuation.continuing != nil {
            let accepted = continuation.continuation(head, now: now)
            self.continuation = continuation
            guard !accepted else { return .continued }
            self.discarding = true
            let reason = self.breakFailure ?? .upstreamBroken("upstream broke off the response")
            let refusal = reason.withMessage(
                "\(reason.message); the origin's answer to the request for the rest (\(head.status)) was not the rest of the same response"
            )
            self.refusal = refusal
            return .notTheRest(refusal)
        }
        self.continuation?.firstHead(head, now: now)
        self.responseHeadArrived()
        return .first
    }

    /// The first final head declared a body of `length` bytes (0 for a HEAD, 204 or 304).
    mutating func bodyDeclared(_ length: Int64) {
        self.declaredLength = length
    }

    /// `count` response body bytes were taken (what a continuation asks for next).
    mutating func responseBodyTaken(_ count: Int) {
        self.bodyTaken += Int64(count)
        self.continuation?.bodyReceived(count)
    }

    /// The whole response (`length` body bytes) arrived from upstream (row five of the table).
    mutating func responseArrived(length: Int64) -> Action {
        guard self.state != .completed, self.responseLength == nil else { return .none }
        self.responseLength = length
        guard !self.upload.ended else { return .none }
        return self.stopAfterResponse()
    }

    // MARK: the response body (curl, and the client's event loop)

    /// curl hands over response bytes; `waiting` counts those gathered since the last delivery,
    /// these included. They are taken always while running: refused bytes would be copied into
    /// curl's pause buffer, a second copy of what waits for the client. Once the window is
    /// full, receiving pauses instead.
    mutating func responseBodyArrived(waiting: Int, now: @autoclosure () -> ContinuousClock.Instant) -> BodyReceipt {
        guard self.state != .suspended else { return .refused }
        guard self.inFlight + waiting >= self.window.size else { return .taken }
        if self.receiveBlockedSince == nil { self.receiveBlockedSince = now() }
        return .takenWindowFull
    }

    /// Gathered bytes were handed to the client's event loop.
    mutating func delivered(_ count: Int) {
        self.inFlight += count
    }

    /// `count` delivered bytes reached the client's socket; `unsent`, asked only when the window
    /// could grow early, is what its kernel still holds unsent.
    mutating func clientWrote(
        _ count: Int, now: @autoclosure () -> ContinuousClock.Instant, unsent: @autoclosure () -> Int? = nil
    ) -> Action {
        self.inFlight -= count
        self.clientWritten += Int64(count)
        guard let since = self.receiveBlockedSince, self.inFlight < self.window.lowWatermark else { return .none }
        self.receiveBlockedSince = nil
        guard self.state == .running else { return .none }
        return .continueReceiving(
            resize: self.window.afterDrain(paused: now() - since, written: self.clientWritten, unsent: unsent()))
    }

    /// The budget granted a growth, or a shrink was released.
    mutating func resizeWindow(_ change: ReceiveWindow.Change) {
        guard self.state != .completed else { return }
        self.window.apply(change)
    }

    // MARK: the end

    /// The transfer ended, by itself or after a cancel, whichever came first: a transfer that
    /// completed before the cancel reached curl completed.
    mutating func complete(_ result: UpstreamResult) -> Action {
        if self.answered, self.state != .completed {
            self.state = .completed
            return .finishAnswered(release: self.window.reserved)
        }
        if self.heldAtResponse {
            guard self.state != .suspended else {
                // Ended while its response is held (a short body, a broken one): the release says.
                self.endWhileHeld = result
                return .none
            }
            self.heldResponseDropped = true  // canceled while held
        }
        if case .failure(let failure) = result, let range = self.continueAfterBreak(failure) {
            return .requestRest(range)
        }
        guard self.state != .completed else { return .none }
        self.upload.curlWaiting = false
        return .finish(
            self.end(with: self.stoppedAfterResponse ? .success : self.checked(result)), release: self.window.reserved)
    }

    /// Completes the task with `result`, its failure kept with the state.
    private mutating func end(with result: UpstreamResult) -> UpstreamResult {
        self.state = .completed
        if case .failure(let failure) = result { self.failure = failure }
        return result
    }

    /// A success is one only with the whole body: a refused continuation's transfer may complete
    /// before its cancel reaches curl, and nothing else may end a declared length short.
    private func checked(_ result: UpstreamResult) -> UpstreamResult {
        guard result == .success else { return result }
        if let refusal = self.refusal { return .failure(refusal) }
        if let declared = self.declaredLength, self.bodyTaken != declared {
            return .failure(.upstreamBroken("the body ended at \(self.bodyTaken) of \(declared) bytes"))
        }
        return result
    }

    /// The origin broke a running task's response off: the request for the rest when
    /// `TransparentResume` allows it (the task goes on with a new transfer), else nil.
    private mutating func continueAfterBreak(_ failure: TaskFailure) -> DownloadStateMachine.RangeRequest? {
        guard var continuation = self.continuation, self.state == .running,
            let range = continuation.next(after: failure)
        else { return nil }
        self.continuation = continuation
        self.breakFailure = failure
        return range
    }
}
