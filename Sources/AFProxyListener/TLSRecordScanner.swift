/// One direction of a TLS connection read at the record layer as the bytes pass, decrypting
/// nothing: which handshake messages went in the clear, the first alert sent in the clear,
/// whether encrypted records followed, and whether the bytes are TLS records at all.
///
/// It exists because BoringSSL's error after a failed handshake does not say what the peer
/// actually sent: whether afproxy's certificate ever left (a plaintext alert of afproxy's own
/// is also bytes down), or which alert a TLS 1.3 client sent in the clear where an encrypted
/// record was due (BoringSSL reports only a bad record for it).
struct TLSRecordScanner {
    /// Handshake message types seen in the clear (1 ClientHello, 2 ServerHello, 11 Certificate).
    private(set) var messages: Set<UInt8> = []
    /// A record that cannot be TLS came first or later: nothing more is read.
    private(set) var notTLS = false
    /// An application-data record passed: in TLS 1.3 the encrypted part of a flight.
    private(set) var encrypted = false
    /// The description of the first alert sent in the clear.
    private(set) var alert: UInt8?
    /// The body of the first handshake message when it is a ClientHello, once whole, for what it
    /// offers.
    private(set) var firstMessage: [UInt8]?
    /// The first handshake message is no ClientHello, or too long to keep: `firstMessage` stays nil.
    private(set) var firstMessageSkipped = false

    /// Nothing more of a ClientHello is to come: it is whole, or the bytes are something else
    /// (afproxy's answer may depend on it: `ClientHelloGate`).
    var helloSettled: Bool {
        self.firstMessage != nil || self.firstMessageSkipped || self.notTLS || self.alert != nil || self.encrypted
    }

    private var header: [UInt8] = []
    private var recordType: UInt8 = 0
    private var recordLeft = 0
    /// After a ChangeCipherSpec, TLS 1.2 handshake records are encrypted: their content is not read.
    private var readsMessages = true
    private var messageHeader: [UInt8] = []
    private var messageLeft = 0
    private var capturing: [UInt8]?
    private var alertBytes: [UInt8] = []

    /// The largest record a peer may send (ciphertext), and the largest first message kept.
    static let maxRecord = 16_384 + 2_048
    static let maxFirstMessage = 65_536

    mutating func scan(_ bytes: some Collection<UInt8>) {
        var index = bytes.startIndex
        while index != bytes.endIndex, !self.notTLS {
            if self.recordLeft == 0 {
                self.header.append(bytes[index])
                index = bytes.index(after: index)
                if self.header.count == 5 { self.beginRecord() }
                continue
            }
            let available = bytes.distance(from: index, to: bytes.endIndex)
            let take = min(available, self.recordLeft)
            let end = bytes.index(index, offsetBy: take)
            self.content(bytes[index..<end])
            self.recordLeft -= take
            index = end
        }
    }

    private mutating func beginRecord() {
        let type = self.header[0]
        let length = Int(self.header[3]) << 8 | Int(self.header[4])
        let major = self.header[1]
        self.header.removeAll(keepingCapacity: true)
        guard (20...23).contains(type), major == 3, length > 0, length <= Self.maxRecord else {
            self.notTLS = true
            return
        }
        // A peer's first record is a handshake; SSLv2-style and other bytes are not TLS here.
        if self.messages.isEmpty, type != 22, self.alert == nil {
            self.notTLS = type != 21
        }
        self.recordType = type
        self.recordLeft = length
        self.alertBytes.removeAll()
        switch type {
        case 20: self.readsMessages = false
        case 23: self.encrypted = true
        default: break
        }
        // An alert in the clear is two bytes; an encrypted one is longer.
        if type == 21, length != 2 { self.recordType = 0 }
    }

    private mutating func content(_ bytes: some Collection<UInt8>) {
        switch self.recordType {
        case 21:
            self.alertBytes.append(contentsOf: bytes)
            if self.alertBytes.count == 2, self.alert == nil { self.alert = self.alertBytes[1] }
        case 22 where self.readsMessages:
            self.handshake(bytes)
        default:
            break
        }
    }

    private mutating func handshake(_ bytes: some Collection<UInt8>) {
        var index = bytes.startIndex
        while index != bytes.endIndex {
            if self.messageLeft == 0 {
                self.messageHeader.append(bytes[index])
                index = bytes.index(after: index)
                if self.messageHeader.count == 4 { self.beginMessage() }
                continue
            }
            let take = min(bytes.distance(from: index, to: bytes.endIndex), self.messageLeft)
            let end = bytes.index(index, offsetBy: take)
            self.capturing?.append(contentsOf: bytes[index..<end])
            self.messageLeft -= take
            index = end
            if self.messageLeft == 0 { self.endMessage() }
        }
    }

    private mutating func beginMessage() {
        let type = self.messageHeader[0]
        let length = Int(self.messageHeader[1]) << 16 | Int(self.messageHeader[2]) << 8 | Int(self.messageHeader[3])
        self.messageHeader.removeAll(keepingCapacity: true)
        if self.messages.isEmpty {
            if type == 1, length <= Self.maxFirstMessage {
                self.capturing = []
            } else {
                self.firstMessageSkipped = true
            }
        }
        self.messages.insert(type)
        self.messageLeft = length
        if length == 0 { self.endMessage() }
    }

    private mutating func endMessage() {
        if let whole = self.capturing, self.firstMessage == nil { self.firstMessage = whole }
        self.capturing = nil
    }
}
