#if canImport(Glibc)
import Glibc
#endif

/// A value behind a pthread mutex, with the interface of `Synchronization.Mutex`.
///
/// Why not `Mutex` itself: on Linux it hands a contended lock over inside the kernel (a
/// priority-inheritance futex), which ThreadSanitizer cannot see, so every critical section that
/// ever waited was reported as a data race (58 reports in one run of the integration suite, none
/// of them real), burying the real ones. ThreadSanitizer intercepts pthread mutexes. An
/// uncontended lock costs the same either way: one atomic operation in, one out.
package final class Locked<Value: ~Copyable>: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private var value: Value

    package init(_ value: consuming sending Value) {
        self.value = value
        self.mutex = .allocate(capacity: 1)
        self.mutex.initialize(to: pthread_mutex_t())
        let result = pthread_mutex_init(self.mutex, nil)
        precondition(result == 0, "pthread_mutex_init failed: \(result)")
    }

    deinit {
        pthread_mutex_destroy(self.mutex)
        self.mutex.deallocate()
    }

    package func withLock<Result: ~Copyable, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        pthread_mutex_lock(self.mutex)
        defer { pthread_mutex_unlock(self.mutex) }
        return try body(&self.value)
    }
}
