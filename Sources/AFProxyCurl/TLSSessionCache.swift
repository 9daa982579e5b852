import CCurl

#if canImport(Glibc)
import Glibc
#endif

/// The TLS sessions every session thread's transfers share (a curl share object of
/// CURL_LOCK_DATA_SSL_SESSION), so that a task to an https origin another task reached before
/// resumes its session (one round trip and no certificate exchange) even on a new connection
/// made by another session thread: libcurl 7.88 keeps them per easy handle otherwise, and with a
/// cache per session thread a client whose connection landed on another loop did a full
/// handshake. curl calls the lock around each use of the cache, from whichever session thread
/// uses it: one mutex, as only the one kind of data is shared, held for a lookup or an insert.
final class TLSSessionCache: @unchecked Sendable {
    let share: UnsafeMutableRawPointer?
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    init() {
        CurlGlobal.initializeOnce()
        self.mutex = .allocate(capacity: 1)
        pthread_mutex_init(self.mutex, nil)
        self.share = curl_share_init()
        guard let share = self.share else { return }
        _ = afc_share_setopt_long(share, CURLSHOPT_SHARE, Int(CURL_LOCK_DATA_SSL_SESSION.rawValue))
        _ = afc_share_setopt_lock(
            share,
            { _, _, _, mutex in
                pthread_mutex_lock(mutex!.assumingMemoryBound(to: pthread_mutex_t.self))
            },
            { _, _, mutex in
                pthread_mutex_unlock(mutex!.assumingMemoryBound(to: pthread_mutex_t.self))
            },
            UnsafeMutableRawPointer(self.mutex))
    }

    /// After every session that used it: its transfers' handles are gone by then.
    deinit {
        if let share = self.share { curl_share_cleanup(share) }
        pthread_mutex_destroy(self.mutex)
        self.mutex.deallocate()
    }
}
