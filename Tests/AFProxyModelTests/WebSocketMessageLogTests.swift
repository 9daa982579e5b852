import AFProxyModel
import FoundationEssentials
import Testing

@Suite struct WebSocketMessageLogTests {
    private static func message(_ size: Int, _ tag: UInt8 = 0) -> WebSocketMessage {
        WebSocketMessage(
            direction: .sent, opcode: .binary, size: Int64(size), at: Date(timeIntervalSince1970: 0),
            payload: Array(repeating: tag, count: size), cut: false)
    }

    @Test func keepsTheLatestMessagesAndCountsTheDropped() {
        var log = WebSocketMessageLog(limit: 1 << 20)
        for index in 0..<(WebSocketMessageLog.messageLimit + 250) { log.append(Self.message(1, UInt8(index % 256))) }
        #expect(log.count == WebSocketMessageLog.messageLimit)
        #expect(log.dropped == 250)
        #expect(log.messages.first?.payload == [UInt8(250 % 256)])
        #expect(log.payloadBytes == WebSocketMessageLog.messageLimit)
    }

    @Test func payloadsStayWithinTheBudget() {
        var log = WebSocketMessageLog(limit: 100)
        #expect(log.payloadBudget == 1600)
        for index in 0..<40 { log.append(Self.message(100, UInt8(index))) }
        #expect(log.payloadBytes <= 1600)
        #expect(log.count == 16 && log.dropped == 24)
        #expect(log.messages.last?.payload == Array(repeating: 39, count: 100))
        log.append(Self.message(500, 1))
        #expect(log.messages.last?.payload?.count == 100 && log.messages.last?.cut == true)
        #expect(WebSocketMessageLog(limit: 64 << 20).payloadBudget == WebSocketMessageLog.largestBudget)
    }
}
