/// Which of a transport's sessions should run a transfer, named by the identity of the event loop
/// its client is served on (`SessionAffinity(eventLoop)` in AFProxyManager): a transport with
/// one session per loop runs the transfer on that loop's session, so that the session thread
/// and the loop it hands bytes to are a pair and a request never crosses to another pair. An
/// identity rather than the loop itself, so that this module and the engines behind it stay
/// free of NIO.
package struct SessionAffinity: Hashable, Sendable {
    package let key: ObjectIdentifier

    package init(key: ObjectIdentifier) {
        self.key = key
    }
}
