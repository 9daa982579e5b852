import AFProxyModel
import AFProxyRules
import AFProxyTransport
import CCurl

/// One upstream HTTP exchange on a curl easy handle: the session's `HTTPTransfer`, made by
/// `UpstreamSession.makeTransfer`. Created on any thread, then owned by the session thread:
/// every stored property below the session is read and written there only, which is why the
/// type is `@unchecked Sendable`. Its commands only enqueue (`UpstreamTransfer+HTTPTransfer`).
package final class UpstreamTransfer: @unchecked Sendable {
    /// What the task asked for (request, options, destination rules, throttle); the session
    /// reads its parts where it needs them, all immutable, so from any thread.
    package let request: TransferRequest
    /// Where its commands are queued. Strong, and no cycle that lasts: the session holds a
    /// transfer only while a command for it is queued or it runs (`SessionLoop.active`), and lives
    /// as long as the daemon.
    let session: UpstreamSession

    /// Strong until completion, then cleared: that breaks the cycle delegate → transfer → delegate,
    /// as AFNetworking breaks manager → dictionary → delegate → block.
    var delegate: (any HTTPTransferDelegate)?

    // MARK: session-thread state

    /// The URL the transfer's handle requests: the request's, unless a download's redirect led
    /// to a host on the other route of the upstream proxy (`SessionLoop.reroute`).
    private(set) var url: String
    /// A redirect to a host on the other route, stopped before its request went out: the
    /// transfer goes on from that URL on a fresh handle, which takes that host's route.
    var rerouteTo: String?
    /// The redirects a download may still follow, over all its handles (curl counts per handle).
    private(set) var redirectsLeft = UpstreamTransfer.redirectLimit
    static let redirectLimit = 10
    /// A reroute led to another origin than the request's: its credentials (`Authorization`,
    /// `Cookie`) are not sent there, as curl does not send them across a redirect it follows.
    private(set) var withholdsCredentials = false
    /// Where a download's redirects are routed (set by `SessionLoop.configureProxy`).
    var route: LiveUpstreamProxy?
    var handle: EasyHandle?
    var headers: UnsafeMutablePointer<curl_slist>?
    var headParser = ResponseHeadParser()
    /// The strict reader of a chunked body, from the final head on (curl hands over the raw
    /// chunked bytes: `CURLOPT_HTTP_TRANSFER_DECODING` is off); nil when the body is not chunked.
    var chunked: ChunkedBodyDecoder?
    /// The session's buffer for the decoded bytes of a write callback, set when the transfer starts.
    var scratch: DecodeScratch?
    /// The session's socket watcher, told which cached connection this transfer takes.
    var watcher: SocketWatcher?
    /// The ports of the connection a plain-HTTP transfer took (its prerequest callback), for the
    /// watcher's map of sockets; nil for TLS, and until then.
    var ports: ConnectionPorts?
    /// Plain HTTP to the origin: its socket carries HTTP itself, no TLS records.
    var isPlainHTTP: Bool { self.url.utf8.starts(with: "http://".utf8) }

    /// The host the handle's URL names, as the route rules match it.
    var host: String {
        guard self.url != self.request.request.url else { return self.request.request.host }
        return LoopbackHost.host(ofURL: self.url)?.lowercased() ?? self.request.request.host
    }
    /// The origin's head needed leniency (`ResponseHeadParser.retiresConnection`), or its answer
    /// came before the request body was all sent, and curl was told not to keep the connection.
    var reuseForbidden = false
    /// Request body bytes handed to curl (back to 0 when it rewinds), and whether the body ended.
    var bodyBytesSent: Int64 = 0
    var bodyEnded = false
    /// Why the transfer was aborted from a callback (an invalid response head), which then
    /// replaces curl's own code for it.
    var abortReason: TaskFailure?
    /// An address curl was about to connect to that the destination rules refuse: the failure
    /// when no other address of the host could be connected.
    var deniedAddress: TaskFailure?
    /// The upstream proxy this transfer goes through (`SessionLoop.configureProxy`), nil: direct.
    var upstreamProxy: UpstreamProxy?
    /// Where a transfer through the proxy reports that it reached it.
    var liveUpstreamProxy: LiveUpstreamProxy?
    var phase: Phase = .waiting
    /// The directions to keep paused (`CURLPAUSE_RECV`, `CURLPAUSE_SEND`): set by the task's
    /// commands (suspend, resume, continue) and by the delegate's answers in the callbacks (its
    /// window is full, it has no request bytes). The task decides; this only remembers what it
    /// was told, to tell curl.
    var pauseWanted: Int32 = 0
    /// The final head reached the delegate: a pause of receiving now holds body bytes only.
    var receivedFinalHead = false
    /// The metrics read when the final head came, and the handle they were read from: the end
    /// adds only the total time to them (`EasyHandle.finalMetrics`) instead of reading them all
    /// again.
    var headMetrics: (handle: UnsafeMutableRawPointer, metrics: TaskMetrics)?
    /// The pause mask curl has now.
    var appliedPause: Int32 = 0
    /// Something reached the delegate since its last flush; the transfer is then in `flushes`.
    var needsFlush = false
    /// The session loop's list of transfers to flush, set when the transfer starts.
    var flushes: PendingFlushes?
    /// curl's receive buffer for this transfer (CURLOPT_BUFFERSIZE).
    var receiveBufferSize = 0
    /// The last body callback took a whole receive buffer and let curl read on: the socket may
    /// hold more, which `SessionLoop.iterate` reads in the same turn.
    var filledReceiveBuffer = false
    /// Monotonic time of the last byte moved, for the idle timeout.
    var lastActivity: ContinuousClock.Instant = .now
    /// The directions paused because a throttle bucket was empty: a pause of its own, beside
    /// `pauseWanted`, so that neither a resume nor a drained window lifts it, and it never shows
    /// as a suspend. Lifted by the session loop at `throttleWake`.
    var throttlePause: Int32 = 0
    var throttleWake: ContinuousClock.Instant?
    /// The session loop's list of throttled transfers, set when the transfer starts.
    var throttled: ThrottledTransfers?

    enum Phase {
        case waiting
        case active
        case done
    }

    init(_ request: TransferRequest, session: UpstreamSession, delegate: any HTTPTransferDelegate) {
        self.request = request
        self.session = session
        self.url = request.request.url
        self.delegate = delegate
        self.headParser.followsRedirects = request.options.followsRedirects
    }

    /// The handle that stopped at a redirect to `url` (its `redirects` followed) is gone: what
    /// belonged to it is forgotten, and the next handle starts from `url`.
    func reroute(to url: String, after redirects: Int) {
        self.redirectsLeft -= redirects
        if !Self.sameOrigin(url, self.request.request.url) { self.withholdsCredentials = true }
        self.url = url
        self.rerouteTo = nil
        self.headParser = ResponseHeadParser()
        self.headParser.followsRedirects = self.request.options.followsRedirects
        self.chunked = nil
        self.ports = nil
        self.reuseForbidden = false
        self.bodyBytesSent = 0
        self.bodyEnded = false
        self.abortReason = nil
        self.deniedAddress = nil
        self.upstreamProxy = nil
        self.liveUpstreamProxy = nil
        self.appliedPause = 0
    }

    /// Scheme, host and port alike: curl's test for sending credentials after a redirect.
    private static func sameOrigin(_ a: String, _ b: String) -> Bool {
        guard let a = URLOrigin(a), let b = URLOrigin(b) else { return false }
        return a == b
    }

    /// The pause mask curl is to have. A request without a body has nothing more to send, so
    /// pausing its receiving pauses both directions: libcurl 7.88 answers a pause of one
    /// direction by forcing a check of both, and that check reads one more buffer off the paused
    /// side into its pause buffer.
    var desiredPause: Int32 {
        var mask = self.pauseWanted | self.throttlePause
        // Not while the head is still coming: libcurl 7.88 keeps what arrives for a paused
        // transfer in one buffer per kind (body, header, status line, each of a 1xx too) and
        // fails it with CURLE_OUT_OF_MEMORY past three kinds, which interim heads with a
        // suspend between them reached. Receiving stops at the first body byte instead (`write`).
        if !self.receivedFinalHead { mask &= ~CURLPAUSE_RECV }
        if mask & CURLPAUSE_RECV != 0 && self.request.request.body == .none { mask |= CURLPAUSE_SEND }
        return mask
    }

    /// Queues the transfer for the flush that follows the current `curl_multi_socket_action`,
    /// which also stamps `lastActivity`: one clock read per flush, not one per 16 KiB callback.
    func markForFlush() {
        guard !self.needsFlush else { return }
        self.needsFlush = true
        self.flushes?.transfers.append(self)
    }

    /// The trailer fields of a chunked response; complete when the transfer completed. Session
    /// thread only.
    package var trailers: HTTPHeaderList { self.chunked?.trailers ?? self.headParser.trailers }

    /// Whether the body that follows the final head `head` is chunked: the head says so and the
    /// exchange has a body at all (not a HEAD request, not 204 or 304, for which curl reads no
    /// body either). `ResponseFraming` has made sure chunked is the last coding. An HTTP/2 head
    /// never names chunked (RFC 9113 §8.2.2), so its body passes as it comes.
    func bodyIsChunked(_ head: ProxyResponseHead) -> Bool {
        guard !self.request.request.isHead, head.status != 204, head.status != 304 else { return false }
        return head.transferCodings.last == "chunked"
    }

    /// The whole request body went to curl (a request without one sent it all at once).
    var requestBodySent: Bool {
        switch self.request.request.body {
        case .none: true
        case .length(let length): self.bodyEnded || self.bodyBytesSent >= length
        case .streamed: self.bodyEnded
        }
    }

    /// Idle for the purpose of our timeout: running, and not waiting on a person or the client.
    var isWaitingOnUpstream: Bool { self.pauseWanted == 0 && self.throttlePause == 0 }

    /// A throttle bucket refused `direction`'s bytes: curl pauses it (the callback answers a
    /// pause) until the session loop asks the throttle again after `wait`.
    func throttle(_ direction: Int32, for wait: Duration) {
        self.throttlePause |= direction
        self.appliedPause |= direction
        let wake = ContinuousClock.now + wait
        if let current = self.throttleWake, current <= wake { return }
        if self.throttleWake == nil { self.throttled?.transfers.append(self) }
        self.throttleWake = wake
    }
}

// MARK: curl callbacks

/// curl's callbacks, as C function pointers without captures: the transfer arrives through the
/// userdata pointer (`Unmanaged`), which the session keeps alive while curl holds the handle.
enum TransferCallbacks {
    /// The least a throttled upload asks its buckets for before it sends: small enough for the
    /// buckets' capacity at any rate, large enough that curl is not woken for a few bytes.
    static let throttledPiece = 16 << 10

    /// curl hands over one header line per call, except when the transfer was paused as lines
    /// arrived: it then keeps them in its pause buffer and hands them over together on resume
    /// (a suspended chunked response's trailer section came as one "line" and was lost). So the
    /// buffer is split into lines here.
    static let header: afc_data_callback = { buffer, size, count, userdata in
        let length = size * count
        guard let buffer, let userdata else { return length }
        let transfer = Unmanaged<UpstreamTransfer>.fromOpaque(userdata).takeUnretainedValue()
        let bytes = UnsafeRawBufferPointer(start: buffer, count: length)
        var start = 0
        while start < length {
            let end = bytes[start...].firstIndex(of: UInt8(ascii: "\n")).map { $0 + 1 } ?? length
            guard Self.headerLine(UnsafeRawBufferPointer(rebasing: bytes[start..<end]), of: transfer) else { return 0 }
            start = end
        }
        return length
    }

    /// False when the line ends the transfer (any count other than the length does).
    private static func headerLine(_ line: UnsafeRawBufferPointer, of transfer: UpstreamTransfer) -> Bool {
        let event = transfer.headParser.feed(line)
        if transfer.headParser.retiresConnection, !transfer.reuseForbidden {
            // Read when curl is done with the transfer, so setting it now still closes the
            // connection then instead of returning it to the cache.
            transfer.reuseForbidden = true
            transfer.handle?.set(CURLOPT_FORBID_REUSE, 1)
        }
        switch event {
        case nil:
            return true
        case .interim(let head):
            transfer.markForFlush()
            transfer.delegate?.transfer(transfer, didReceiveInterim: head)
            return true
        case .final(let head):
            if let failure = transfer.proxyAnswer(head) {
                transfer.abortReason = failure
                return false
            }
            if !transfer.requestBodySent, !transfer.reuseForbidden {
                // An answer before the whole request body: what the origin would read next on
                // this connection is the rest of that body, or nothing if it closes; curl 7.88
                // kept such a connection after an answer to `Expect` (left in its cache, closed
                // by the origin, a descriptor held until the cache was next pruned).
                transfer.reuseForbidden = true
                transfer.handle?.set(CURLOPT_FORBID_REUSE, 1)
            }
            transfer.chunked = transfer.bodyIsChunked(head) ? ChunkedBodyDecoder() : nil
            transfer.receivedFinalHead = true
            transfer.markForFlush()
            var metrics = TaskMetrics()
            if let handle = transfer.handle {
                metrics = handle.metrics()
                transfer.headMetrics = (handle.raw, metrics)
            }
            transfer.delegate?.transfer(transfer, didReceive: head, metrics: metrics)
            return true
        case .invalid(let reason):
            // curl then closes the connection.
            transfer.abortReason = .badResponse("upstream sent an invalid response: \(reason)")
            return false
        }
    }

    /// curl hands over the body as it came off the wire: a chunked one still framed, which
    /// `ChunkedBodyDecoder` reads here, handing the delegate the decoded bytes in one call per
    /// callback. Refused bytes come again later (curl keeps them), so the decoder then goes back
    /// to the copy taken before it read them. The throttle counts the bytes on the wire.
    static let write: afc_data_callback = { buffer, size, count, userdata in
        let length = size * count
        guard let buffer, let userdata else { return length }
        let transfer = Unmanaged<UpstreamTransfer>.fromOpaque(userdata).takeUnretainedValue()
        guard let delegate = transfer.delegate else { return length }
        if transfer.pauseWanted & CURLPAUSE_RECV != 0 {
            // A suspend that came during the head (`desiredPause`): the body waits in curl.
            transfer.appliedPause |= CURLPAUSE_RECV
            return Int(CURL_WRITEFUNC_PAUSE)
        }
        // Throttled: the bytes wait in curl's pause buffer until every bucket has them, so a
        // transfer never runs ahead of its rate by more than a bucket's capacity.
        var throttled = false
        if let throttle = transfer.request.throttle, throttle.isActive {
            if case .wait(let wait) = throttle.acquire(.down, need: length) {
                transfer.throttle(CURLPAUSE_RECV, for: wait)
                return Int(CURL_WRITEFUNC_PAUSE)
            }
            throttle.take(.down, length)
            throttled = true
        }
        let raw = UnsafeRawBufferPointer(start: buffer, count: length)
        let receipt: BodyReceipt
        if let before = transfer.chunked {
            let shared = transfer.scratch.flatMap { $0.inUse ? nil : $0 }
            let scratch = shared ?? DecodeScratch()
            scratch.inUse = true
            defer { scratch.inUse = false }
            var decoder = before
            scratch.bytes.removeAll(keepingCapacity: true)
            if case .invalid(let reason) = decoder.decode(raw, into: &scratch.bytes) {
                transfer.chunked = decoder
                transfer.abortReason = .badResponse("upstream sent invalid chunked framing: \(reason)")
                return 0
            }
            guard !scratch.bytes.isEmpty else {
                transfer.lastActivity = .now  // framing only: no flush follows to stamp it
                transfer.chunked = decoder
                if decoder.isComplete && !before.isComplete { delegate.transferDidReceiveWholeBody(transfer) }
                return length
            }
            transfer.markForFlush()
            receipt = scratch.bytes.withUnsafeBytes { delegate.transfer(transfer, didReceiveBodyBytes: $0) }
            if receipt != .refused {
                transfer.chunked = decoder
                if decoder.isComplete && !before.isComplete { delegate.transferDidReceiveWholeBody(transfer) }
            }
        } else {
            transfer.markForFlush()
            receipt = delegate.transfer(transfer, didReceiveBodyBytes: raw)
        }
        switch receipt {
        case .taken:
            transfer.filledReceiveBuffer = length >= transfer.receiveBufferSize
            return length
        case .takenWindowFull:
            // Pausing from inside the write callback is allowed (curl_easy_pause(3)); curl then
            // reads nothing more, where returning CURL_WRITEFUNC_PAUSE would have it copy the
            // bytes into its pause buffer.
            transfer.pauseWanted |= CURLPAUSE_RECV
            transfer.appliedPause = transfer.desiredPause
            if let handle = transfer.handle { curl_easy_pause(handle.raw, transfer.appliedPause) }
            return length
        case .refused:
            if throttled { transfer.request.throttle?.refund(.down, length) }
            transfer.pauseWanted |= CURLPAUSE_RECV
            transfer.appliedPause |= CURLPAUSE_RECV
            return Int(CURL_WRITEFUNC_PAUSE)
        }
    }

    static let seek: afc_seek_callback = { userdata, offset, origin in
        guard let userdata, offset == 0, origin == SEEK_SET else { return CURL_SEEKFUNC_CANTSEEK }
        let transfer = Unmanaged<UpstreamTransfer>.fromOpaque(userdata).takeUnretainedValue()
        guard let delegate = transfer.delegate, delegate.transferRewindRequestBody(transfer) else {
            return CURL_SEEKFUNC_CANTSEEK
        }
        transfer.pauseWanted &= ~CURLPAUSE_SEND
        transfer.bodyBytesSent = 0
        transfer.bodyEnded = false
        return CURL_SEEKFUNC_OK
    }

    static let read: afc_data_callback = { buffer, size, count, userdata in
        let length = size * count
        guard let buffer, let userdata else { return Int(CURL_READFUNC_ABORT) }
        let transfer = Unmanaged<UpstreamTransfer>.fromOpaque(userdata).takeUnretainedValue()
        guard let delegate = transfer.delegate else { return Int(CURL_READFUNC_ABORT) }
        var offered = length
        let throttle = transfer.request.throttle.flatMap { $0.isActive ? $0 : nil }
        if let throttle {
            switch throttle.acquire(.up, need: min(length, TransferCallbacks.throttledPiece)) {
            case .wait(let wait):
                transfer.throttle(CURLPAUSE_SEND, for: wait)
                return Int(CURL_READFUNC_PAUSE)
            case .go(let available):
                offered = min(length, max(available, TransferCallbacks.throttledPiece))
            }
        }
        switch delegate.transfer(
            transfer, fillRequestBody: UnsafeMutableRawBufferPointer(start: buffer, count: offered))
        {
        case .bytes(let count):
            throttle?.take(.up, count)
            transfer.markForFlush()
            transfer.bodyBytesSent += Int64(count)
            return count
        case .pause:
            transfer.pauseWanted |= CURLPAUSE_SEND
            transfer.appliedPause |= CURLPAUSE_SEND
            return Int(CURL_READFUNC_PAUSE)
        case .end:
            transfer.bodyEnded = true
            return 0
        }
    }
}

/// Transfers that gathered something for their delegate since the last flush, in the order they
/// did: the session loop flushes after every socket it served rather than scanning every active
/// transfer once per loop iteration.
final class PendingFlushes {
    var transfers: [UpstreamTransfer] = []
}

/// Transfers paused by a throttle bucket, each until its `throttleWake`: the session loop
/// sleeps no longer than the earliest and then lets them ask again.
final class ThrottledTransfers {
    var transfers: [UpstreamTransfer] = []
}
