/// One DNS question as a stub resolver asks it (RFC 1035 §4.1), and the answer afproxy's capture
/// resolver gives it. Only what that resolver needs: one question, names without compression
/// (queries carry none), answers of A and AAAA records; additional records (EDNS) are ignored
/// and none are sent back, which every client accepts (RFC 6891 §7).
///
/// Written by hand: the answers are a few fixed fields, and no DNS package is among the ones
/// this build resolves.
struct DNSQuery: Equatable {
    var id: UInt16
    /// Recursion desired: echoed.
    var recursionDesired: Bool
    /// The name asked for, lowercased, without the trailing dot.
    var name: String
    var type: UInt16
    var questionClass: UInt16
    /// The question section as it arrived, echoed in the answer.
    var question: [UInt8]

    static let typeA: UInt16 = 1
    static let typeAAAA: UInt16 = 28

    enum ResponseCode: UInt8, Error {
        case noError = 0
        case formatError = 1
        case serverFailure = 2
        case nameError = 3
        case notImplemented = 4
        case refused = 5
    }

    /// Reads a query; nil for anything that is not one standard query with one question.
    init?(_ bytes: [UInt8]) {
        guard bytes.count >= 12 else { return nil }
        let flags = UInt16(bytes[2]) << 8 | UInt16(bytes[3])
        let opcode = (flags >> 11) & 0xF
        let questions = UInt16(bytes[4]) << 8 | UInt16(bytes[5])
        guard flags & 0x8000 == 0, opcode == 0, questions == 1 else { return nil }
        var index = 12
        var labels: [String] = []
        while true {
            guard index < bytes.count else { return nil }
            let length = Int(bytes[index])
            index += 1
            if length == 0 { break }
            // A pointer (0xC0) or a reserved label type: not in a query.
            guard length < 64, index + length <= bytes.count else { return nil }
            labels.append(String(decoding: bytes[index..<index + length], as: UTF8.self))
            index += length
        }
        guard index + 4 <= bytes.count, labels.joined(separator: ".").utf8.count <= 253 else { return nil }
        self.id = UInt16(bytes[0]) << 8 | UInt16(bytes[1])
        self.recursionDesired = flags & 0x0100 != 0
        self.name = labels.joined(separator: ".").lowercased()
        self.type = UInt16(bytes[index]) << 8 | UInt16(bytes[index + 1])
        self.questionClass = UInt16(bytes[index + 2]) << 8 | UInt16(bytes[index + 3])
        self.question = Array(bytes[12..<index + 4])
    }

    /// The id of a message too broken to read as a query, for a FORMERR; nil when not even that.
    static func id(of bytes: [UInt8]) -> UInt16? {
        bytes.count >= 2 ? UInt16(bytes[0]) << 8 | UInt16(bytes[1]) : nil
    }

    /// The answer: `code`, and one record per address of the question's type (4-byte addresses
    /// for A, 16-byte for AAAA), each valid `ttl` seconds.
    func answer(_ code: ResponseCode, addresses: [[UInt8]] = [], ttl: UInt32 = 0) -> [UInt8] {
        var flags: UInt16 = 0x8000 | 0x0080 | UInt16(code.rawValue)  // QR, RA
        if self.recursionDesired { flags |= 0x0100 }
        var bytes = Self.header(id: self.id, flags: flags, questions: 1, answers: UInt16(addresses.count))
        bytes += self.question
        for address in addresses {
            bytes += [0xC0, 12]  // the name: a pointer to the question's
            bytes += [UInt8(self.type >> 8), UInt8(self.type & 0xFF), 0, 1]
            bytes += [UInt8(ttl >> 24), UInt8((ttl >> 16) & 0xFF), UInt8((ttl >> 8) & 0xFF), UInt8(ttl & 0xFF)]
            bytes += [UInt8(address.count >> 8), UInt8(address.count & 0xFF)] + address
        }
        return bytes
    }

    /// A FORMERR for a message that could not be read, with no question.
    static func formatError(id: UInt16) -> [UInt8] {
        Self.header(
            id: id, flags: 0x8000 | 0x0080 | UInt16(ResponseCode.formatError.rawValue), questions: 0, answers: 0)
    }

    private static func header(id: UInt16, flags: UInt16, questions: UInt16, answers: UInt16) -> [UInt8] {
        [
            UInt8(id >> 8), UInt8(id & 0xFF), UInt8(flags >> 8), UInt8(flags & 0xFF),
            0, UInt8(questions), UInt8(answers >> 8), UInt8(answers & 0xFF), 0, 0, 0, 0,
        ]
    }
}
