import AFProxyServerKit
import NIOCore
import NIOHTTP1

/// What a control connection may take from the daemon. The API's requests are a line and a few
/// fields with no body worth the name, sent by afproxyctl or a script on the same machine, so every
/// limit sits far above what they use and far below what would cost the daemon anything; a client
/// over one is answered at once instead of waited for or dropped.
enum ControlLimits {
    /// Concurrent control connections. afproxyctl holds one per command (`watch` one for its
    /// stream), so a person and a few scripts or dashboards stay under ten; 64 leaves room for a
    /// burst of parallel commands while bounding the descriptors and memory that a runaway loop of
    /// clients can pin.
    static let maxConnections = 64

    /// A request head (request line and fields): 16 KiB, twice the 8 KiB most servers keep for a
    /// line, where the API's heads are under 200 bytes. NIO's default would be 80 KiB.
    static let maxHeaderBytes = 16 << 10

    /// The parser's limits: a head over `maxHeaderBytes`, in one field or in all, is its
    /// `headerOverflow`, which `ControlParserErrorHandler` answers with 431.
    static var decoder: NIOHTTPDecoderLimitConfiguration {
        var limits = NIOHTTPDecoderLimitConfiguration()
        limits.maxHeaderListSize = Self.maxHeaderBytes
        limits.maxHeaderFieldSize = Self.maxHeaderBytes
        return limits
    }

    /// A request body: only `POST /v1/downloads` reads one, a URL, a path and a few header lines,
    /// so 64 KiB is far above it; beyond it the answer is 413 without reading further.
    static let maxBodyBytes = 64 << 10

    /// The body of an edit at a hold (`PATCH /v1/tasks/{id}/request`, `POST …/respond`), which
    /// carries a whole request or response body in base64: 12 MiB holds a body of 8 MiB, plenty
    /// for the API payloads people edit by hand, and a bound on what one control request pins.
    static let maxEditBodyBytes = 12 << 20

    /// From a request's first byte to its last (head and body): a client on the same machine sends
    /// a request in well under a millisecond, so 10 s is only reached by one that stopped halfway,
    /// which would otherwise pin a connection (and one of `maxConnections`) for good.
    static let requestTimeout = TimeAmount.seconds(10)

    /// A connection with no request under way (just opened, or its last answer ended): HTTP lets a
    /// server close an idle connection, and without this a client that connects and says nothing
    /// would hold a slot for ever. 60 s keeps keep-alive reuse by a polling client working.
    static let idleTimeout = TimeAmount.seconds(60)

    /// How long a refused connection (over `maxConnections`) is kept half-closed to take the request
    /// the client is sending: closing it at once would make the client's write fail (EPIPE) before
    /// it reads the 503 that says why.
    static let refusalLinger = TimeAmount.seconds(1)

    /// Refused connections lingering at once: a runaway loop of clients over the cap holds no more
    /// descriptors than this beyond `maxConnections`; further refusals are written and closed at once.
    static let maxLingeringRefusals = 32

    /// A cap of `maxConnections` whose refusal is the API's 503.
    static func admission() -> ConnectionAdmission {
        ConnectionAdmission(
            limit: Self.maxConnections, linger: Self.refusalLinger, maxLingering: Self.maxLingeringRefusals)
    }

    /// The 503 of a connection over the cap.
    static func overCapacity(limit: Int) -> ControlRefusal {
        ControlRefusal(
            .serviceUnavailable, "the control socket is at its limit of \(limit) connections; close one and retry")
    }

    /// The idle timer and the request timer (head and body), whose 408 is the API's error; no
    /// codec shedding: control connections are few.
    static func timeoutHandler(
        idleTimeout: TimeAmount = Self.idleTimeout, requestTimeout: TimeAmount = Self.requestTimeout
    ) -> ConnectionTimeoutHandler {
        let seconds = requestTimeout.nanoseconds / 1_000_000_000
        return ConnectionTimeoutHandler(idleTimeout: idleTimeout, requestTimeout: requestTimeout) {
            ControlRefusal(.requestTimeout, "the request did not arrive in full within \(seconds) s").bytes()
        }
    }
}
