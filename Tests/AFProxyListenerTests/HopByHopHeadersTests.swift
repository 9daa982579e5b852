import AFProxyListener
import AFProxyModel
import Testing

@Suite struct HopByHopHeadersTests {
    @Test func removesTheFixedListAndWhatConnectionNames() {
        let headers: HTTPHeaderList = [
            .init("Host", "a"), .init("Connection", "keep-alive, X-Private"), .init("X-Private", "1"),
            .init("Keep-Alive", "5"), .init("Proxy-Authorization", "Basic x"), .init("TE", "trailers"),
            .init("Transfer-Encoding", "chunked"), .init("Upgrade", "h2c"), .init("Proxy-Connection", "close"),
            .init("Trailer", "X"), .init("Accept", "*/*"),
        ]
        // Trailer is end-to-end (RFC 9110 §6.6.2).
        #expect(
            HopByHopHeaders.removing(from: headers) == [
                .init("Host", "a"), .init("Trailer", "X"), .init("Accept", "*/*"),
            ])
    }

    @Test func aListWithoutHopByHopFieldsComesBackWhole() {
        let headers: HTTPHeaderList = [.init("Host", "a"), .init("Accept", "*/*"), .init("X-Connection", "close")]
        #expect(HopByHopHeaders.removing(from: headers) == headers)
        #expect(HopByHopHeaders.removing(from: []) == [])
    }

    @Test func fieldsAroundTheRemovedOnesKeepTheirOrder() {
        let headers: HTTPHeaderList = [
            .init("keep-alive", "5"), .init("A", "1"), .init("Connection", "b"), .init("B", "2"), .init("C", "3"),
            .init("b", "4"), .init("D", "5"),
        ]
        #expect(
            HopByHopHeaders.removing(from: headers) == [.init("A", "1"), .init("C", "3"), .init("D", "5")])
        #expect(HopByHopHeaders.connectionNamed(in: headers) == ["b"])
    }

    @Test func progressFraction() {
        #expect(TransferProgress(completed: 50, total: 200).fraction == 0.25)
        #expect(TransferProgress(completed: 50, total: nil).fraction == nil)
        #expect(TransferProgress(completed: 0, total: 0).fraction == 1)
    }
}
