import AFProxyModel
import CCurl

/// A curl easy handle with its error buffer, one per transfer and never reused.
///
/// Reuse is what Debian's libcurl 7.88.1 cannot take: a handle's next transfer, after
/// `curl_easy_reset` or without it, starts with the header API's pointer to the previous
/// transfer's last header (cleared in init only since 8.1, curl #11101), and a response whose
/// first field line starts with a space then "unfolds" into freed memory, which glibc aborts on.
/// A fresh handle starts with that pointer empty. `curl_easy_duphandle` would be safe but costs
/// more than a new handle (bench/curl_handles), and a fresh one is a small share of a request.
/// Connections are unaffected: they live in the multi handle's cache, not in the easy handle.
final class EasyHandle {
    let raw: UnsafeMutableRawPointer
    let errorBuffer: UnsafeMutablePointer<CChar>

    init?() {
        guard let raw = curl_easy_init() else { return nil }
        self.raw = raw
        self.errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
        self.errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
    }

    deinit {
        curl_easy_cleanup(self.raw)
        self.errorBuffer.deallocate()
    }

    var errorText: String { String(cString: self.errorBuffer) }

    func set(_ option: CURLoption, _ value: Int) {
        _ = afc_easy_setopt_long(self.raw, option, value)
    }

    func set(_ option: CURLoption, offset value: Int64) {
        _ = afc_easy_setopt_off_t(self.raw, option, curl_off_t(value))
    }

    /// curl copies string options (since 7.17), so the Swift string may go away afterwards.
    @discardableResult
    func set(_ option: CURLoption, _ value: String) -> CURLcode {
        value.withCString { afc_easy_setopt_string(self.raw, option, $0) }
    }

    func set(_ option: CURLoption, pointer value: UnsafeMutableRawPointer?) {
        _ = afc_easy_setopt_pointer(self.raw, option, value)
    }

    func set(_ option: CURLoption, callback: afc_data_callback) {
        _ = afc_easy_setopt_data_callback(self.raw, option, callback)
    }

    func set(_ option: CURLoption, list: UnsafeMutablePointer<curl_slist>?) {
        _ = afc_easy_setopt_slist(self.raw, option, list)
    }

    /// The socket of the connection a finished transfer left in curl's cache, or -1 when curl
    /// closed it.
    var idleSocket: curl_socket_t {
        var socket: curl_socket_t = -1
        guard afc_easy_getinfo_socket(self.raw, CURLINFO_ACTIVESOCKET, &socket) == CURLE_OK else { return -1 }
        return socket
    }

    /// The ports of the connection the transfer used, as curl recorded them (no system call).
    var connectionPorts: ConnectionPorts? {
        var local = 0
        var remote = 0
        guard afc_easy_getinfo_long(self.raw, CURLINFO_LOCAL_PORT, &local) == CURLE_OK,
            afc_easy_getinfo_long(self.raw, CURLINFO_PRIMARY_PORT, &remote) == CURLE_OK, local > 0, remote > 0
        else { return nil }
        return ConnectionPorts(local: Int32(local), remote: Int32(remote))
    }

    /// The transfer went over HTTP/2 (or later): its connection multiplexes streams.
    var isMultiplexed: Bool {
        var value = 0
        guard afc_easy_getinfo_long(self.raw, CURLINFO_HTTP_VERSION, &value) == CURLE_OK else { return false }
        return value >= Int(CURL_HTTP_VERSION_2_0)
    }

    /// The redirects this handle followed.
    var redirectCount: Int {
        var value = 0
        guard afc_easy_getinfo_long(self.raw, CURLINFO_REDIRECT_COUNT, &value) == CURLE_OK else { return 0 }
        return value
    }

    /// The errno of the last socket call that failed (a refused connect says ECONNREFUSED).
    var osErrno: Int32 {
        var value = 0
        guard afc_easy_getinfo_long(self.raw, CURLINFO_OS_ERRNO, &value) == CURLE_OK else { return 0 }
        return Int32(truncatingIfNeeded: value)
    }

    /// A connection to the origin was established (a later timeout is its silence, not the connect's).
    var wasConnected: Bool {
        var value: curl_off_t = 0
        guard afc_easy_getinfo_off_t(self.raw, CURLINFO_CONNECT_TIME_T, &value) == CURLE_OK else { return false }
        return value > 0
    }

    /// The metrics at the end: those read at the final head (`atHead`, when read from this
    /// handle) with the total time, one read instead of every one again; all of them otherwise
    /// (a transfer that ended before its head).
    func finalMetrics(atHead: (handle: UnsafeMutableRawPointer, metrics: TaskMetrics)?) -> TaskMetrics {
        guard let atHead, atHead.handle == self.raw else { return self.metrics() }
        var metrics = atHead.metrics
        var total: curl_off_t = 0
        if afc_easy_getinfo_off_t(self.raw, CURLINFO_TOTAL_TIME_T, &total) == CURLE_OK, total > 0 {
            metrics.totalMs = Double(total) / 1000
        }
        return metrics
    }

    /// The phase timings and connection facts of the transfer so far.
    func metrics() -> TaskMetrics {
        func milliseconds(_ info: CURLINFO) -> Double? {
            var value: curl_off_t = 0
            guard afc_easy_getinfo_off_t(self.raw, info, &value) == CURLE_OK, value > 0 else { return nil }
            return Double(value) / 1000
        }
        func long(_ info: CURLINFO) -> Int? {
            var value = 0
            guard afc_easy_getinfo_long(self.raw, info, &value) == CURLE_OK else { return nil }
            return value
        }
        var metrics = TaskMetrics()
        metrics.dnsMs = milliseconds(CURLINFO_NAMELOOKUP_TIME_T)
        metrics.connectMs = milliseconds(CURLINFO_CONNECT_TIME_T)
        metrics.tlsMs = milliseconds(CURLINFO_APPCONNECT_TIME_T)
        metrics.ttfbMs = milliseconds(CURLINFO_STARTTRANSFER_TIME_T)
        metrics.totalMs = milliseconds(CURLINFO_TOTAL_TIME_T)
        var ip: UnsafeMutablePointer<CChar>? = nil
        if afc_easy_getinfo_string(self.raw, CURLINFO_PRIMARY_IP, &ip) == CURLE_OK, let ip, ip[0] != 0 {
            let port = long(CURLINFO_PRIMARY_PORT) ?? 0
            let address = String(cString: ip)
            // On the UTF-8 view: `contains(":")` went through Foundation's string search, which
            // was most of this function's time, twice a request on the session thread.
            let isIPv6 = address.utf8.contains(UInt8(ascii: ":"))
            metrics.remoteAddress = isIPv6 ? "[\(address)]:\(port)" : "\(address):\(port)"
            metrics.reusedConnection = long(CURLINFO_NUM_CONNECTS).map { $0 == 0 }
        }
        switch long(CURLINFO_HTTP_VERSION) ?? 0 {
        case Int(CURL_HTTP_VERSION_1_0): metrics.httpVersion = "1.0"
        case Int(CURL_HTTP_VERSION_1_1): metrics.httpVersion = "1.1"
        case Int(CURL_HTTP_VERSION_2_0): metrics.httpVersion = "2"
        case Int(CURL_HTTP_VERSION_3): metrics.httpVersion = "3"
        default: break
        }
        return metrics
    }
}
