/// What the client and afproxy sent each other in the clear during an intercepted connection's
/// handshake, as `TLSRecordWatch` read it: the facts a failed handshake is judged by.
struct HandshakeRecords {
    var client = TLSRecordScanner()
    var server = TLSRecordScanner()

    /// The client's ClientHello, when it sent one that reads as such.
    var clientHello: ClientHelloOffer? {
        guard self.client.messages.contains(1), let body = self.client.firstMessage else { return nil }
        return ClientHelloOffer(body: body)
    }

    /// afproxy answered a ClientHello with its certificate: in the clear in TLS 1.2, encrypted
    /// right behind the ServerHello in TLS 1.3 (a HelloRetryRequest alone sends no encrypted
    /// record). An alert of afproxy's own is neither.
    var certificateSent: Bool {
        self.server.messages.contains(11) || (self.server.messages.contains(2) && self.server.encrypted)
    }

    /// The alert the client sent in the clear, by name.
    var clientAlert: String? { self.client.alert.map(TLSAlertName.name) }
}
