import Testing

@testable import AFProxyListener

/// Queries as glibc's stub resolver writes them, and the capture resolver's answers.
@Suite struct DNSQueryTests {
    /// A standard query for `name` of `type`, recursion desired, with an EDNS record after it.
    static func query(_ name: String, type: UInt16 = 1, id: UInt16 = 0xBEEF) -> [UInt8] {
        var bytes: [UInt8] = [UInt8(id >> 8), UInt8(id & 0xFF), 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 1]
        for label in name.split(separator: ".") { bytes += [UInt8(label.utf8.count)] + Array(label.utf8) }
        bytes += [0, UInt8(type >> 8), UInt8(type & 0xFF), 0, 1]
        return bytes + [0, 0, 41, 4, 208, 0, 0, 0, 0, 0, 0]  // OPT: ignored
    }

    @Test func aQueryIsReadWithItsQuestion() throws {
        let query = try #require(DNSQuery(Self.query("API.Example.test", type: 28)))
        #expect(query.id == 0xBEEF && query.recursionDesired)
        #expect(query.name == "api.example.test" && query.type == 28 && query.questionClass == 1)
        #expect(query.question == Array(Self.query("API.Example.test", type: 28)[12..<34]))
    }

    @Test func theAnswerEchoesTheQuestionAndCarriesOneRecordPerAddress() throws {
        let query = try #require(DNSQuery(Self.query("a.test")))
        let answer = query.answer(.noError, addresses: [[127, 0, 0, 1], [10, 1, 2, 3]], ttl: 30)
        #expect(Array(answer[0..<12]) == [0xBE, 0xEF, 0x81, 0x80, 0, 1, 0, 2, 0, 0, 0, 0])
        #expect(Array(answer[12..<12 + query.question.count]) == query.question)
        let first = Array(answer[(12 + query.question.count)...].prefix(16))
        #expect(first == [0xC0, 12, 0, 1, 0, 1, 0, 0, 0, 30, 0, 4, 127, 0, 0, 1])
        #expect(answer.count == 12 + query.question.count + 32)
        #expect(query.answer(.refused)[3] == 0x85)
    }

    @Test func whatIsNoStandardQueryIsNotRead() {
        var response = Self.query("a.test")
        response[2] |= 0x80
        #expect(DNSQuery(response) == nil)
        var update = Self.query("a.test")
        update[2] = 0x28  // opcode 5
        #expect(DNSQuery(update) == nil)
        var pointer = Self.query("a.test")
        pointer[12] = 0xC0
        #expect(DNSQuery(pointer) == nil)
        #expect(DNSQuery(Array(Self.query("a.test").prefix(15))) == nil)
        #expect(DNSQuery.id(of: [0x12, 0x34, 0]) == 0x1234)
        #expect(DNSQuery.formatError(id: 0x1234) == [0x12, 0x34, 0x80, 0x81, 0, 0, 0, 0, 0, 0, 0, 0])
    }
}
