import AFProxyModel
import AFProxyTransport
import CCurl

/// The pin of the key a TLS host presents now (`afproxyctl pin`), so that a person can put it in
/// the config. The connection is verified as a download's would be (the system's CAs and
/// `tls-ca-file`): a host that does not verify gets no pin.
///
/// curl computes the hash itself when a pin is set and says it in its informational text
/// (" public key hash: sha256//…") before it compares; so the probe sets a pin that cannot
/// match and reads the hash from that text. It runs a blocking `curl_easy_perform` with
/// `CONNECT_ONLY` (handshake, no request) on the caller's thread, outside the session: a
/// person's one-off question, not a task, and nothing on the session thread waits for it.
///
/// It goes through the upstream proxy where requests to the host do (`upstream-proxy`): where the
/// network allows nothing else, a direct probe would fail.
package enum PinProbe {
    /// A pin no key has: 32 zero bytes.
    private static let impossiblePin = "sha256//AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="

    package static func pin(
        host: String, port: Int, caFile: String?, connectTimeout: Duration, proxy: UpstreamProxy? = nil
    ) -> Result<String, TaskFailure> {
        CurlGlobal.initializeOnce()
        guard let handle = EasyHandle() else { return .failure(.internalError("curl_easy_init failed")) }
        let collector = HashCollector()
        let box = Unmanaged.passRetained(collector)
        defer { box.release() }
        let authority = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        handle.set(CURLOPT_NOSIGNAL, 1)
        handle.set(CURLOPT_URL, "https://\(authority)/")
        UpstreamProxyFailure.configure(handle, proxy: proxy)
        handle.set(CURLOPT_PROTOCOLS_STR, "https")
        handle.set(CURLOPT_CONNECT_ONLY, 1)
        handle.set(CURLOPT_ERRORBUFFER, pointer: UnsafeMutableRawPointer(handle.errorBuffer))
        handle.set(CURLOPT_CONNECTTIMEOUT_MS, Int(connectTimeout.milliseconds))
        handle.set(CURLOPT_TIMEOUT_MS, Int(connectTimeout.milliseconds) * 2)
        if let caFile {
            handle.set(CURLOPT_CAINFO, caFile)
            handle.set(CURLOPT_CAPATH, TransferOptions.systemCADirectory)
        }
        handle.set(CURLOPT_PINNEDPUBLICKEY, Self.impossiblePin)
        handle.set(CURLOPT_VERBOSE, 1)
        handle.set(CURLOPT_DEBUGDATA, pointer: box.toOpaque())
        _ = afc_easy_setopt_debug_callback(handle.raw, Self.debug)
        let code = curl_easy_perform(handle.raw)
        if let pin = collector.pin, code == CURLE_SSL_PINNEDPUBKEYNOTMATCH || code == CURLE_OK {
            return .success(pin)
        }
        if let proxy,
            let failure = UpstreamProxyFailure.classify(code, of: handle, through: proxy, detail: handle.errorText)
        {
            return .failure(failure)
        }
        let failure = TaskFailure.fromCurl(
            code,
            .init(detail: handle.errorText, connected: handle.wasConnected, osErrno: handle.osErrno, host: host))
        return .failure(code == CURLE_OK ? .tlsFailure("\(authority) showed no public key") : failure)
    }

    private final class HashCollector {
        var pin: String?
    }

    private static let debug: afc_debug_callback = { _, type, data, size, userdata in
        guard type == CURLINFO_TEXT, let data, let userdata else { return 0 }
        let text = String(decoding: UnsafeRawBufferPointer(start: data, count: size), as: UTF8.self)
        // " public key hash: sha256//BASE64\n"
        guard text.contains("public key hash:"),
            let start = text.split(separator: " ").first(where: { $0.hasPrefix("sha256//") })
        else { return 0 }
        let pin = start.prefix { !$0.isWhitespace }
        Unmanaged<HashCollector>.fromOpaque(userdata).takeUnretainedValue().pin = String(pin)
        return 0
    }
}
