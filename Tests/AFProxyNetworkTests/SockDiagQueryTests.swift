import AFProxyModel
import CNetlink
import Testing

@testable import AFProxyNetwork

/// The bytes of an exact inet_diag request and the reading of the kernel's answers.
@Suite struct SockDiagQueryTests {
    let client = ConnectionAddresses.Endpoint(address: [127, 0, 0, 1], port: 0xA0B2)
    let server = ConnectionAddresses.Endpoint(address: [127, 0, 0, 1], port: 3128)

    @Test func theRequestNamesTheSocketByItsFourAddresses() {
        let bytes = SockDiagQuery.request(client: self.client, server: self.server, sequence: 7)
        #expect(bytes.count == 16 + 56)
        let slice = bytes[...]
        #expect(slice.integer(at: 0, as: UInt32.self) == 72)
        #expect(slice.integer(at: 4, as: UInt16.self) == UInt16(SOCK_DIAG_BY_FAMILY))
        #expect(slice.integer(at: 6, as: UInt16.self) == UInt16(NLM_F_REQUEST))  // not a dump
        #expect(slice.integer(at: 8, as: UInt32.self) == 7)
        #expect(bytes[16] == 2)  // AF_INET
        #expect(bytes[17] == 6)  // TCP
        #expect(slice.integer(at: 20, as: UInt32.self) == .max)  // any state
        #expect(Array(bytes[24..<28]) == [0xA0, 0xB2, 0x0C, 0x38])  // ports, network order
        #expect(Array(bytes[28..<44]) == [127, 0, 0, 1] + [UInt8](repeating: 0, count: 12))
        #expect(Array(bytes[44..<60]) == [127, 0, 0, 1] + [UInt8](repeating: 0, count: 12))
        #expect(slice.integer(at: 64, as: UInt32.self) == .max && slice.integer(at: 68, as: UInt32.self) == .max)

        let six = ConnectionAddresses.Endpoint(address: [UInt8](repeating: 0, count: 15) + [1], port: 1)
        #expect(SockDiagQuery.request(client: six, server: six, sequence: 1)[16] == 10)  // AF_INET6
    }

    static func message(type: UInt16, sequence: UInt32, payload: [UInt8]) -> [UInt8] {
        var bytes: [UInt8] = []
        withUnsafeBytes(of: UInt32(16 + payload.count)) { bytes += $0 }
        withUnsafeBytes(of: type) { bytes += $0 }
        withUnsafeBytes(of: UInt16(0)) { bytes += $0 }
        withUnsafeBytes(of: sequence) { bytes += $0 }
        withUnsafeBytes(of: UInt32(0)) { bytes += $0 }
        return bytes + payload
    }

    @Test func theAnswerGivesTheOwnerAndTheInode() {
        var reply = [UInt8](repeating: 0, count: 72)
        withUnsafeBytes(of: UInt32(1000)) { reply.replaceSubrange(64..<68, with: $0) }
        withUnsafeBytes(of: UInt32(99881)) { reply.replaceSubrange(68..<72, with: $0) }
        let bytes = Self.message(type: UInt16(SOCK_DIAG_BY_FAMILY), sequence: 3, payload: reply)
        #expect(SockDiagQuery.answer(bytes[...], sequence: 3) == .found(uid: 1000, inode: 99881))
        #expect(SockDiagQuery.answer(bytes[...], sequence: 4) == .other)
        // Short: no answer read past its end.
        let short = Self.message(type: UInt16(SOCK_DIAG_BY_FAMILY), sequence: 3, payload: Array(reply[0..<40]))
        #expect(SockDiagQuery.answer(short[...], sequence: 3) == .other)
    }

    @Test func anErrorGivesItsCode() {
        var code: [UInt8] = []
        withUnsafeBytes(of: Int32(-2)) { code += $0 }
        let bytes = Self.message(
            type: UInt16(NLMSG_ERROR), sequence: 9, payload: code + [UInt8](repeating: 0, count: 16))
        #expect(SockDiagQuery.answer(bytes[...], sequence: 9) == .failed(errno: 2))
    }
}
