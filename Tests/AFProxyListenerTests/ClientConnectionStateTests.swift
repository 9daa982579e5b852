import NIOCore
import NIOHTTP1
import Testing

@testable import AFProxyListener

/// The client connection's decisions, fed without a channel: a plain object stands for a task.
@Suite struct ClientConnectionStateTests {
    private final class Task {}
    private typealias State = ClientConnectionState<Task>

    private func head(_ uri: String = "http://origin.test/") -> State.Input {
        .part(.head(HTTPRequestHead(version: .http1_1, method: .GET, uri: uri)))
    }

    /// Starts an exchange for `task` and ends its request, as a GET without a body does.
    private func forwardGet(_ state: inout State, _ task: Task) {
        let handledNow1 = state.receive(self.head())
        #expect(handledNow1)
        state.requestStarted(isHead: false)
        state.forward(State.Exchange(task: task, version: .http1_1, keepAlive: true))
        let handledNow2 = state.receive(.part(.end(nil)))
        #expect(handledNow2)
        guard case .finishBody(let ended) = state.requestEnded() else {
            Issue.record("the end of a forwarded request finishes its body")
            return
        }
        #expect(ended === task)
    }

    @Test func aPipelinedRequestWaitsWithReadsHeldUntilTheResponseBeforeItEnded() {
        var state = State()
        let first = Task()
        self.forwardGet(&state, first)
        // The next request arrives while the first is being answered.
        let handledNow3 = state.receive(self.head("http://origin.test/second"))
        #expect(!handledNow3)
        let handledNow4 = state.receive(.part(.end(nil)))
        #expect(!handledNow4)
        #expect(state.holds == [.pipelined])
        let readPassed1 = state.read()
        #expect(!readPassed1)
        #expect(state.nextQueued() == nil)  // nothing is handled before the response ended

        state.responseStarted(framing: .length, closeAfter: false)
        let keptOpen1 = state.exchangeEnded()
        #expect(keptOpen1 == .keepOpen)
        guard case .part(.head(let next)) = state.nextQueued() else {
            Issue.record("the queued head comes first")
            return
        }
        #expect(next.uri == "http://origin.test/second")
        state.forward(State.Exchange(task: Task(), version: .http1_1, keepAlive: true))
        guard case .part(.end) = state.nextQueued() else {
            Issue.record("then its end")
            return
        }
        _ = state.requestEnded()
        #expect(state.nextQueued() == nil)
        let readsAgain1 = state.queueDrained()
        #expect(readsAgain1)  // the held read goes through now
        #expect(state.holds.isEmpty)
    }

    @Test func readsAreHeldForTheCurrentTaskOnlyAndReleasedOnce() {
        var state = State()
        let task = Task()
        let handledNow5 = state.receive(self.head())
        #expect(handledNow5)
        state.forward(State.Exchange(task: task, version: .http1_1, keepAlive: true))
        state.hold(.backpressure, for: task)
        state.hold(.suspended, for: Task())  // not this connection's task: ignored
        #expect(state.holds == [.backpressure])
        #expect(state.read() == false)
        #expect(state.release(.suspended, for: task) == false)
        let released1 = state.release(.backpressure, for: task)
        #expect(released1)
        #expect(state.release(.backpressure, for: task) == false)  // the held read went already
        let readPassed2 = state.read()
        #expect(readPassed2)
    }

    @Test func aMalformedRequestBehindAValidOneIsAnsweredAfterItAndCloses() {
        var state = State()
        let task = Task()
        self.forwardGet(&state, task)
        let refusal = ProxyRefusal(.badRequest, "malformed request", closeConnection: false)
        let handledNow6 = state.receive(.malformed(refusal))
        #expect(!handledNow6)
        #expect(state.holds == [.pipelined, .malformed])
        let keptOpen2 = state.exchangeEnded()
        #expect(keptOpen2 == .keepOpen)
        guard case .malformed(let queued) = state.nextQueued() else {
            Issue.record("the refusal waited its turn")
            return
        }
        guard case .refuse(let answer, let version, let ending) = state.malformed(queued) else {
            Issue.record("an idle connection answers the refusal")
            return
        }
        #expect(answer.closeConnection && answer.status == .badRequest && version == .http1_1 && ending == nil)
        state.refusalWritten(closing: true)
        // What follows a malformed request is never parsed, but it is read to be dropped while
        // the connection lingers: left unread, it would turn the close into a reset.
        #expect(state.holds.isEmpty)
        let readPassed3 = state.read()
        #expect(readPassed3)
        let handledNow7 = state.receive(self.head())
        #expect(!handledNow7)  // a closed connection handles nothing more
    }

    @Test func aMalformedBodyAfterTheResponseStartedEndsTheTaskAndCloses() {
        var state = State()
        let task = Task()
        let handledNow8 = state.receive(self.head())
        #expect(handledNow8)
        state.forward(State.Exchange(task: task, version: .http1_1, keepAlive: true))
        state.responseStarted(framing: .chunked, closeAfter: false)
        let refusal = ProxyRefusal(.badRequest, "malformed request")
        let handledNow9 = state.receive(.malformed(refusal))
        #expect(handledNow9)
        guard case .abortAndClose(let ended) = state.malformed(refusal) else {
            Issue.record("a started response cannot be replaced by a refusal")
            return
        }
        #expect(ended === task)
        guard case .closed = state.phase else {
            Issue.record("closed")
            return
        }
    }

    @Test func aRefusedRequestsBodyIsDroppedThenTheRefusalKeepsTheConnection() {
        var state = State()
        let handledNow10 = state.receive(self.head())
        #expect(handledNow10)
        state.refuseAfterBody(ProxyRefusal(.loopDetected, "loop", closeConnection: false), version: .http1_0)
        let handledNow11 = state.receive(.part(.body(ByteBuffer(string: "dropped"))))
        #expect(handledNow11)
        #expect(state.bodyTarget == nil)
        guard case .refuse(let refusal, .http1_0) = state.requestEnded() else {
            Issue.record("the refusal is written at the request's end")
            return
        }
        #expect(refusal.status == .loopDetected)
        state.refusalWritten(closing: false)
        let handledNow12 = state.receive(self.head())
        #expect(handledNow12)  // idle again
    }

    @Test func aClosedChannelEndsTheRunningExchangesTask() {
        var state = State()
        let task = Task()
        let handledNow13 = state.receive(self.head())
        #expect(handledNow13)
        state.forward(State.Exchange(task: task, version: .http1_1, keepAlive: true))
        #expect(state.channelClosed() === task)
        #expect(state.channelClosed() == nil)
    }

    @Test func anHTTP10ExchangeOrOneTheOriginClosesDoesNotKeepTheConnection() {
        var state = State()
        self.forwardGet(&state, Task())
        state.responseStarted(framing: .close, closeAfter: true)
        let keptOpen3 = state.exchangeEnded()
        #expect(keptOpen3 == .close)
    }

    /// A response that came before the client finished its request body: the connection lingers
    /// (drops what still arrives) and closes, and nothing holds the reads that drain it.
    @Test func aResponseBeforeTheWholeRequestBodyEndsTheConnectionLingering() {
        var state = State()
        let task = Task()
        let value1 = state.receive(self.head())
        #expect(value1)
        state.requestStarted(isHead: false)
        state.forward(State.Exchange(task: task, version: .http1_1, keepAlive: true))
        state.hold(.backpressure, for: task)
        state.responseStarted(framing: .length, closeAfter: true)
        let value2 = state.exchangeEnded()
        #expect(value2 == .close)
        #expect(state.holds.isEmpty)
        let value3 = state.receive(.part(.body(ByteBuffer(string: "abc"))))
        #expect(!value3)  // dropped
    }

    /// Requests pipelined behind one whose answer closes the connection are dropped, and nothing
    /// holds the reads any more: the client's bytes are drained rather than left unread, which
    /// would make the close a reset that destroys the answers before it.
    @Test func requestsPipelinedBehindAClosingAnswerAreDrainedNotHeld() {
        var state = State()
        self.forwardGet(&state, Task())
        let queued = state.receive(self.head())
        #expect(!queued)
        #expect(state.holds == [.pipelined])
        state.refusalWritten(closing: true)
        #expect(state.holds.isEmpty)
        #expect(state.nextQueued() == nil)
        let read = state.read()
        #expect(read)
        let malformed = state.receive(.malformed(ProxyRefusal(.badRequest, "junk")))
        #expect(!malformed)
        #expect(state.holds.isEmpty)  // not even a parser failure holds a closing connection
    }

    /// `Expect: 100-continue`: one 100, the origin's or ours, and only before the response and
    /// while the client still owes its body.
    @Test func aClientWaitingForContinueGetsOneBeforeItsResponse() {
        var state = State()
        let task = Task()
        let value4 = state.receive(self.head())
        #expect(value4)
        state.requestStarted(isHead: false)
        state.forward(State.Exchange(task: task, version: .http1_1, keepAlive: true, awaitsContinue: true))
        let value5 = state.continueWanted(for: Task())
        #expect(!value5)  // another exchange's
        let value6 = state.continueWanted(for: task)
        #expect(value6)
        let value7 = state.continueWanted(for: task)
        #expect(!value7)  // once

        var answered = State()
        let value8 = answered.receive(self.head())
        #expect(value8)
        answered.forward(State.Exchange(task: task, version: .http1_1, keepAlive: true, awaitsContinue: true))
        answered.responseStarted(framing: .length, closeAfter: true)
        let value9 = answered.continueWanted(for: task)
        #expect(!value9)  // the final answer came first

        var plain = State()
        self.forwardGet(&plain, task)
        let value10 = plain.continueWanted(for: task)
        #expect(!value10)
    }

    /// The origin's 100 goes on whether or not the client sent `Expect` (RFC 9110 §15.2: afproxy
    /// never asked for it), once per exchange, never after ours and never after the final head.
    @Test func theOriginsContinueGoesOnOnceWithOrWithoutExpect() {
        let task = Task()
        var unasked = State()
        let answer1 = unasked.receive(self.head())
        #expect(answer1)
        unasked.forward(State.Exchange(task: task, version: .http1_1, keepAlive: true))
        let answer2 = unasked.forwardsContinue(for: Task())
        #expect(!answer2)  // another exchange's
        let answer3 = unasked.forwardsContinue(for: task)
        #expect(answer3)
        let answer4 = unasked.forwardsContinue(for: task)
        #expect(!answer4)  // once
        let answer5 = unasked.continueWanted(for: task)
        #expect(!answer5)

        var oursFirst = State()
        let answer6 = oursFirst.receive(self.head())
        #expect(answer6)
        oursFirst.forward(State.Exchange(task: task, version: .http1_1, keepAlive: true, awaitsContinue: true))
        let answer7 = oursFirst.continueWanted(for: task)
        #expect(answer7)
        let answer8 = oursFirst.forwardsContinue(for: task)
        #expect(!answer8)  // the client had one

        var theirsFirst = State()
        let answer9 = theirsFirst.receive(self.head())
        #expect(answer9)
        theirsFirst.forward(State.Exchange(task: task, version: .http1_1, keepAlive: true, awaitsContinue: true))
        let answer10 = theirsFirst.forwardsContinue(for: task)
        #expect(answer10)
        let answer11 = theirsFirst.continueWanted(for: task)
        #expect(!answer11)

        var afterEnd = State()
        self.forwardGet(&afterEnd, task)
        let answer12 = afterEnd.forwardsContinue(for: task)
        #expect(answer12)  // a body that ended is no reason to drop it

        var answered = State()
        let answer13 = answered.receive(self.head())
        #expect(answer13)
        answered.forward(State.Exchange(task: task, version: .http1_1, keepAlive: true))
        answered.responseStarted(framing: .length, closeAfter: false)
        let answer14 = answered.forwardsContinue(for: task)
        #expect(!answer14)
    }
}
