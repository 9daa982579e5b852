import AFProxyModel
import AFProxyRules
import AFProxyTransport
import CCurl

/// The state of the session thread: the multi handle and the transfers it drives. Only the session thread touches it, hence `@unchecked Sendable`; the one call
/// allowed from other threads is `wakeup()`, which curl documents as thread-safe.
final class SessionLoop: @unchecked Sendable {
    private let multi: UnsafeMutableRawPointer
    /// TLS sessions shared by every transfer of every session (`TLSSessionCache`).
    private let tlsSessions: TLSSessionCache
    private let watcher = SocketWatcher()
    private let configuration: UpstreamConfiguration
    /// The route each new transfer takes and the proxy's health (`SessionLoop+UpstreamProxy`).
    let liveUpstreamProxy: LiveUpstreamProxy
    private var active: [ObjectIdentifier: UpstreamTransfer] = [:]
    /// The active transfers by their easy handle, for the socket watcher's owners.
    private var byHandle: [UnsafeMutableRawPointer: UpstreamTransfer] = [:]
    private let flushes = PendingFlushes()
    private let throttled = ThrottledTransfers()
    private let scratch = DecodeScratch()
    private var waking: [UpstreamTransfer] = []
    private var flushing: [UpstreamTransfer] = []
    private var lastHousekeeping = ContinuousClock.now
    private var lastTrim = ContinuousClock.now

    init(configuration: UpstreamConfiguration, liveUpstreamProxy: LiveUpstreamProxy, tlsSessions: TLSSessionCache) {
        self.liveUpstreamProxy = liveUpstreamProxy
        guard let multi = curl_multi_init() else { fatalError("curl_multi_init failed") }
        self.multi = multi
        self.tlsSessions = tlsSessions
        self.configuration = configuration
        self.watcher.attach(to: multi)
        _ = afc_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, configuration.idleConnections)
        // Concurrent requests to one HTTP/2 origin share its connection as streams.
        _ = afc_multi_setopt_long(multi, CURLMOPT_PIPELINING, Int(CURLPIPE_MULTIPLEX))
    }

    deinit {
        curl_multi_cleanup(self.multi)
    }

    /// What one ready socket's reads take per turn at most (`iterate`): what `HTTPTask` gathers
    /// into one delivery, and the other ready sockets wait no longer than that. A download task,
    /// with its 256 KiB receive buffer, reads once, as before: its chunks queue for the disk.
    static let bytesPerSocket = 256 << 10

    func wakeup() {
        self.watcher.wakeup()
    }

    /// One turn: sleep until a socket is ready, curl's timer is due or a command arrived; let
    /// curl move the bytes of each ready socket and, right after each, hand what it produced to
    /// the delegates (finished transfers first, with their end); time out the silent.
    ///
    /// Handing over per socket rather than once per turn: at 64 busy connections one turn serves
    /// dozens of sockets, and a response that arrived first waited for all of them before its
    /// event loop saw it. The event loop wakes once either way (NIO coalesces wakeups).
    func iterate() {
        self.handOver()  // what the commands just handled produced (an unpause delivers at once)
        let (ready, timerDue) = self.watcher.wait(limit: self.throttleLimit(.seconds(1)))
        if !self.watcher.closedUnder.isEmpty {
            for easy in self.watcher.takeClosedUnder() {
                guard let transfer = self.byHandle[easy] else { continue }
                self.originClosed(transfer)
            }
        }
        var running: Int32 = 0
        let served = ContinuousClock.now
        for (socket, flags) in ready {
            let transfer = self.watcher.owner(of: socket).flatMap { self.byHandle[$0] }
            transfer?.lastActivity = served
            transfer?.filledReceiveBuffer = false
            curl_multi_socket_action(self.multi, socket, flags, &running)
            // libcurl 7.88 reads a plain socket once per call. While a read filled the whole
            // receive buffer the socket likely holds more: read it now, so that a fast origin's
            // bytes reach the client's loop in one delivery (one write there) per few reads, not
            // one per 16 KiB with an epoll turn and a loop wakeup each.
            if let transfer, transfer.filledReceiveBuffer {
                var read = transfer.receiveBufferSize
                while read < Self.bytesPerSocket, transfer.filledReceiveBuffer {
                    transfer.filledReceiveBuffer = false
                    curl_multi_socket_action(self.multi, socket, CURL_CSELECT_IN, &running)
                    read += transfer.receiveBufferSize
                }
            }
            self.handOver()
        }
        if timerDue {
            curl_multi_socket_action(self.multi, CURL_SOCKET_TIMEOUT, 0, &running)
        }
        self.handOver()
        if !self.throttled.transfers.isEmpty {
            self.wakeThrottled()
            self.handOver()
        }
        let now = ContinuousClock.now
        if now - self.lastHousekeeping >= .seconds(1) {
            self.lastHousekeeping = now
            self.expireIdle(now: now)
            self.trimIfIdle()
        }
    }

    /// How long the loop may sleep: no longer than until the first throttled transfer may ask
    /// again (rounded up to epoll's milliseconds, so it does not wake just before).
    private func throttleLimit(_ limit: Duration) -> Duration {
        guard !self.throttled.transfers.isEmpty else { return limit }
        let now = ContinuousClock.now
        var earliest = limit
        for transfer in self.throttled.transfers {
            guard let wake = transfer.throttleWake else { continue }
            earliest = min(earliest, max(.zero, wake - now))
        }
        let nanoseconds = earliest.components.seconds * 1_000_000_000 + earliest.components.attoseconds / 1_000_000_000
        return .milliseconds((nanoseconds + 999_999) / 1_000_000)
    }

    /// Lifts the throttle pause of each transfer whose wait is over: curl then offers its bytes
    /// (or asks for some) again, and the callback asks the buckets again, pausing anew if they
    /// still refuse.
    private func wakeThrottled() {
        let now = ContinuousClock.now
        swap(&self.waking, &self.throttled.transfers)
        for transfer in self.waking {
            guard transfer.phase == .active, let wake = transfer.throttleWake else {
                transfer.throttleWake = nil
                continue
            }
            guard wake <= now else {
                self.throttled.transfers.append(transfer)
                continue
            }
            transfer.throttleWake = nil
            transfer.throttlePause = 0
            transfer.lastActivity = now
            self.applyPause(transfer)
        }
        self.waking.removeAll(keepingCapacity: true)
    }

    /// Completions first (a finished transfer's last bytes go with its end, in one delivery),
    /// then what running transfers gathered.
    private func handOver() {
        self.reapFinished()
        guard !self.flushes.transfers.isEmpty else { return }
        swap(&self.flushing, &self.flushes.transfers)
        let now = ContinuousClock.now
        for transfer in self.flushing where transfer.needsFlush {
            transfer.needsFlush = false
            transfer.lastActivity = now
            transfer.delegate?.transferDidFlush(transfer)
        }
        self.flushing.removeAll(keepingCapacity: true)
    }

    func handle(_ command: UpstreamSession.Command) {
        switch command {
        case .start(let transfer):
            self.start(transfer)
        case .suspend(let transfer):
            transfer.pauseWanted = CURLPAUSE_RECV | CURLPAUSE_SEND
            self.applyPause(transfer)
        case .resume(let transfer):
            // Every direction continues, also those the delegate paused by refusing bytes while
            // it was suspended: a direction that still has to wait pauses again in its callback.
            transfer.pauseWanted = 0
            transfer.lastActivity = .now
            self.applyPause(transfer)
        case .continueReceiving(let transfer):
            transfer.pauseWanted &= ~CURLPAUSE_RECV
            self.applyPause(transfer)
        case .continueSending(let transfer):
            transfer.pauseWanted &= ~CURLPAUSE_SEND
            self.applyPause(transfer)
        case .cancel(let transfer, let reason):
            switch transfer.phase {
            case .waiting, .active: self.finish(transfer, .failure(reason))
            case .done: break
            }
        }
    }

    func cancelAll() {
        for transfer in Array(self.active.values) {
            self.finish(transfer, .failure(.daemonStopping()))
        }
    }

    // MARK: -

    private func start(_ transfer: UpstreamTransfer) {
        guard transfer.phase == .waiting else { return }
        self.launch(transfer)
    }

    /// Puts `transfer` on a new easy handle, for its URL now: at its start, and after a reroute.
    private func launch(_ transfer: UpstreamTransfer) {
        if let denial = DestinationCheck.denial(ofURL: transfer.url, by: transfer.request.destinations) {
            self.finish(transfer, .failure(.destinationDenied(denial)))
            return
        }
        guard let handle = EasyHandle() else {
            self.finish(transfer, .failure(.internalError("curl_easy_init failed")))
            return
        }
        self.watcher.adopt(handle, for: transfer)
        transfer.handle = handle
        transfer.flushes = self.flushes
        transfer.throttled = self.throttled
        transfer.scratch = self.scratch
        transfer.phase = .active
        transfer.lastActivity = .now
        self.active[ObjectIdentifier(transfer)] = transfer
        self.byHandle[handle.raw] = transfer
        self.sizeConnectionCache()
        self.configure(handle, for: transfer)
        let code = curl_multi_add_handle(self.multi, handle.raw)
        guard code == CURLM_OK else {
            self.finish(
                transfer,
                .failure(.internalError("curl_multi_add_handle failed: \(String(cString: curl_multi_strerror(code)))")))
            return
        }
        self.applyPause(transfer)
    }

    private func configure(_ handle: EasyHandle, for transfer: UpstreamTransfer) {
        let request = transfer.request.request
        let userdata = Unmanaged.passUnretained(transfer).toOpaque()
        handle.set(CURLOPT_NOSIGNAL, 1)
        handle.set(CURLOPT_PRIVATE, pointer: userdata)
        handle.set(CURLOPT_ERRORBUFFER, pointer: UnsafeMutableRawPointer(handle.errorBuffer))
        handle.set(CURLOPT_URL, transfer.url)
        self.configureProxy(handle, for: transfer)
        handle.set(CURLOPT_PROTOCOLS_STR, transfer.request.options.allowsTLS ? "http,https" : "http")
        if transfer.request.options.followsRedirects {
            handle.set(CURLOPT_FOLLOWLOCATION, 1)
            handle.set(CURLOPT_MAXREDIRS, transfer.redirectsLeft)
            handle.set(CURLOPT_REDIR_PROTOCOLS_STR, "http,https")
        }
        if let caFile = transfer.request.options.caFile {
            // CAINFO replaces the bundle; the system's CAs stay trusted through its hashed
            // directory, so the file adds to them.
            handle.set(CURLOPT_CAINFO, caFile)
            handle.set(CURLOPT_CAPATH, TransferOptions.systemCADirectory)
        }
        if let pins = transfer.request.options.pins {
            handle.set(CURLOPT_PINNEDPUBLICKEY, pins)
            // curl checks the pinned key whether the chain verified or not, and the name with
            // VERIFYHOST, which stays on.
            if transfer.request.options.pinsStandalone { handle.set(CURLOPT_SSL_VERIFYPEER, 0) }
        }
        if transfer.request.options.insecure {
            handle.set(CURLOPT_SSL_VERIFYPEER, 0)
            handle.set(CURLOPT_SSL_VERIFYHOST, 0)
        }
        if transfer.request.options.allowsTLS, let share = self.tlsSessions.share {
            handle.set(CURLOPT_SHARE, pointer: share)
        }
        if transfer.request.options.allowsTLS {
            // HTTP/2 where an https origin offers it in ALPN (never h2c for http://), and a
            // transfer that finds a connection to its origin still being set up waits to learn
            // whether it can multiplex on it rather than opening another.
            handle.set(CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_2TLS))
            handle.set(CURLOPT_PIPEWAIT, 1)
        } else {
            handle.set(CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_1_1))
        }
        handle.set(CURLOPT_PATH_AS_IS, 1)
        // Transparent: bodies pass as the origin encoded them.
        handle.set(CURLOPT_HTTP_CONTENT_DECODING, 0)
        // curl's chunked decoder is lenient (it reads `0x10` as a last chunk), so a chunked body
        // comes raw and `ChunkedBodyDecoder` reads it strictly; curl still parses the chunks to
        // find the message's end. Transfer-Encoding is hop-by-hop (RFC 9112 §6.1): the listener
        // frames the decoded body anew for its client, who may speak HTTP/1.0.
        handle.set(CURLOPT_HTTP_TRANSFER_DECODING, 0)
        handle.set(CURLOPT_CONNECTTIMEOUT_MS, Int(self.configuration.connectTimeout.milliseconds))
        transfer.receiveBufferSize = transfer.request.options.receiveBufferSize ?? self.configuration.receiveBufferSize
        handle.set(CURLOPT_BUFFERSIZE, transfer.receiveBufferSize)
        handle.set(CURLOPT_HEADERFUNCTION, callback: TransferCallbacks.header)
        handle.set(CURLOPT_HEADERDATA, pointer: userdata)
        handle.set(CURLOPT_WRITEFUNCTION, callback: TransferCallbacks.write)
        handle.set(CURLOPT_WRITEDATA, pointer: userdata)
        if transfer.request.destinations.checksAddresses {
            _ = afc_easy_setopt_opensocket_callback(handle.raw, DestinationCheck.openSocket)
            handle.set(CURLOPT_OPENSOCKETDATA, pointer: userdata)
        }

        var list: UnsafeMutablePointer<curl_slist>? = nil
        for field in request.headers {
            if transfer.withholdsCredentials, field.hasName("authorization") || field.hasName("cookie") { continue }
            let line = field.value.isEmpty ? "\(field.name);" : "\(field.name): \(field.value)"
            list = curl_slist_append(list, line)
        }
        // curl adds these unless told not to; a transparent proxy sends only what the client sent.
        if request.headers.first("accept") == nil { list = curl_slist_append(list, "Accept:") }
        // curl's own `Expect` for large bodies only where the client sent one (it went on).
        if request.headers.first("expect") == nil { list = curl_slist_append(list, "Expect:") }
        transfer.headers = list
        handle.set(CURLOPT_HTTPHEADER, list: list)

        switch request.body {
        case .none:
            if request.isHead {
                handle.set(CURLOPT_NOBODY, 1)
            } else if request.method != "GET" {
                handle.set(CURLOPT_CUSTOMREQUEST, request.method)
            }
        case .length, .streamed:
            handle.set(CURLOPT_UPLOAD, 1)
            handle.set(CURLOPT_READFUNCTION, callback: TransferCallbacks.read)
            handle.set(CURLOPT_READDATA, pointer: userdata)
            _ = afc_easy_setopt_seek_callback(handle.raw, TransferCallbacks.seek)
            handle.set(CURLOPT_SEEKDATA, pointer: userdata)
            handle.set(CURLOPT_UPLOAD_BUFFERSIZE, self.configuration.uploadBufferSize)
            if case .length(let length) = request.body {
                handle.set(CURLOPT_INFILESIZE_LARGE, offset: length)
            }
            if request.method != "PUT" { handle.set(CURLOPT_CUSTOMREQUEST, request.method) }
        }
    }

    private func applyPause(_ transfer: UpstreamTransfer) {
        guard transfer.phase == .active, let handle = transfer.handle else { return }
        let desired = transfer.desiredPause
        guard desired != transfer.appliedPause else { return }
        // Set first: unpausing may call the write callback before curl_easy_pause returns, and
        // that callback may pause again.
        transfer.appliedPause = desired
        curl_easy_pause(handle.raw, desired)
    }

    private func reapFinished() {
        var remaining: Int32 = 0
        while let message = curl_multi_info_read(self.multi, &remaining) {
            guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle else { continue }
            let code = afc_msg_result(message)
            var userdata: UnsafeMutableRawPointer? = nil
            _ = afc_easy_getinfo_pointer(easy, CURLINFO_PRIVATE, &userdata)
            guard let userdata else { continue }
            let transfer = Unmanaged<UpstreamTransfer>.fromOpaque(userdata).takeUnretainedValue()
            if let next = transfer.rerouteTo {
                self.reroute(transfer, to: next)
                continue
            }
            let detail = transfer.handle?.errorText ?? ""
            if code == CURLE_OK, let chunked = transfer.chunked, !chunked.isComplete {
                // curl took the end for reached where the strict reading has not (the connection
                // closed in or before the trailer section's final CRLF): the body may lack trailer
                // fields and its end never came, so it is a truncated response, not a complete one.
                self.finish(
                    transfer,
                    .failure(.upstreamBroken("upstream closed the connection before the chunked body was complete")))
            } else if code == CURLE_OK {
                self.finish(transfer, .success)
            } else {
                let failure =
                    transfer.abortReason ?? (code == CURLE_COULDNT_CONNECT ? transfer.deniedAddress : nil)
                    ?? self.proxyFailure(code, of: transfer, detail: detail)
                    ?? .fromCurl(
                        code,
                        .init(
                            detail: detail, headComplete: transfer.headParser.isComplete,
                            connected: transfer.handle?.wasConnected ?? false, osErrno: transfer.handle?.osErrno ?? 0,
                            host: LoopbackHost.host(ofURL: transfer.url)))
                self.finish(transfer, .failure(failure))
            }
        }
        self.watcher.reaped()
    }

    private func expireIdle(now: ContinuousClock.Instant) {
        let limit = self.configuration.idleTimeout
        let expired = self.active.values.filter { $0.isWaitingOnUpstream && now - $0.lastActivity > limit }
        for transfer in expired {
            let seconds = limit.components.seconds
            self.finish(transfer, .failure(.upstreamTimeout("upstream sent nothing for \(seconds) s")))
        }
    }

    /// The origin closed the connection of a transfer whose request body still waits for its
    /// client. curl, its send side paused, reads that end and then waits for the body forever
    /// (7.88 ends a transfer only once both directions are done), so the transfer ends here: a
    /// response that was whole at the close (one delimited by it, or whose length `HTTPTask`
    /// checks) completes; without one, the client gets 502 at once rather than when it gives up.
    private func originClosed(_ transfer: UpstreamTransfer) {
        // The watcher forgets a socket's last owner when another handle watches it or the
        // handle finishes, so `socket` is this transfer's connection (curl no longer names it:
        // CURLINFO_ACTIVESOCKET answers -1 once it read the end).
        guard transfer.phase == .active, let handle = transfer.handle,
            transfer.pauseWanted & CURLPAUSE_SEND != 0, transfer.pauseWanted & CURLPAUSE_RECV == 0,
            !handle.isMultiplexed
        else { return }
        let result: UpstreamResult
        if !transfer.headParser.isComplete {
            result = .failure(
                .upstreamBroken(
                    "upstream closed the connection before it answered, with the request body still to come"))
        } else if let chunked = transfer.chunked, !chunked.isComplete {
            result = .failure(.upstreamBroken("upstream closed the connection before the chunked body was complete"))
        } else {
            result = .success
        }
        self.finish(transfer, result, reusable: false)
    }

    /// While no transfer runs, hands freed heap pages back to the system every few seconds.
    /// glibc keeps them otherwise, so each burst of load (many idle keep-alive connections, then
    /// many busy ones, then a large download) piled its peak on the last one's. A trim with
    /// little to give back is cheap, and none happens while transfers run.
    private func trimIfIdle() {
        let now = ContinuousClock.now
        guard self.active.isEmpty, now - self.lastTrim >= .seconds(2) else { return }
        self.lastTrim = now
        ProcessHeap.trim()
    }

    /// A download's redirect led to a host on the other route of the upstream proxy (excluded, or
    /// no longer): curl takes a handle's proxy for all its redirects, so the transfer goes on
    /// from there on a fresh handle, configured for that host. Its delegate saw nothing of the
    /// stopped handle: curl hands over no head or body of a redirect it follows.
    private func reroute(_ transfer: UpstreamTransfer, to url: String) {
        guard let handle = transfer.handle else { return }
        let followed = handle.redirectCount
        curl_multi_remove_handle(self.multi, handle.raw)
        self.byHandle.removeValue(forKey: handle.raw)
        transfer.handle = nil
        if let headers = transfer.headers { curl_slist_free_all(headers) }
        transfer.headers = nil
        transfer.reroute(to: url, after: followed)
        self.launch(transfer)
    }

    /// Lets curl's connection cache keep `idleConnections` beyond those the transfers under way
    /// hold. curl 7.88 counts every connection, in use or not, against CURLMOPT_MAXCONNECTS, and
    /// a transfer that ends while the cache is over it closes the oldest idle one: its own,
    /// when every other is busy. A fixed 256 therefore closed each connection after its exchange
    /// once more than 256 transfers ran at once (800 streams of 8 HTTP/2 clients: about 250 new
    /// TLS connections a second, fewer than 90 open at a time).
    private func sizeConnectionCache() {
        _ = afc_multi_setopt_long(
            self.multi, CURLMOPT_MAXCONNECTS, self.configuration.idleConnections + self.active.count)
    }

    /// `reusable`: false when the connection is known to be gone even though the result is a
    /// success (the origin closed it), so it is not watched as an idle one.
    private func finish(_ transfer: UpstreamTransfer, _ result: UpstreamResult, reusable: Bool = true) {
        var metrics = TaskMetrics()
        if let handle = transfer.handle {
            metrics = handle.finalMetrics(atHead: transfer.headMetrics)
            // An HTTP/2 connection carries other transfers' streams and frames of its own (PING,
            // SETTINGS) while no stream is open: stirring is no stray answer there.
            let multiplexed = metrics.httpVersion == "2" || metrics.httpVersion == "3"
            if result == .success, reusable, !multiplexed, let ports = handle.connectionPorts {
                self.watcher.connectionWentIdle(handle.idleSocket, ports: ports, by: ObjectIdentifier(transfer))
            }
            curl_multi_remove_handle(self.multi, handle.raw)
            self.byHandle.removeValue(forKey: handle.raw)
            self.watcher.handleEnded(handle.raw)
        }
        transfer.handle = nil  // curl_easy_cleanup, before the header list it points to goes
        if let headers = transfer.headers { curl_slist_free_all(headers) }
        transfer.headers = nil
        transfer.phase = .done
        self.active.removeValue(forKey: ObjectIdentifier(transfer))
        self.sizeConnectionCache()
        let delegate = transfer.delegate
        transfer.delegate = nil
        delegate?.transfer(transfer, didCompleteWith: result, metrics: metrics)
    }
}
