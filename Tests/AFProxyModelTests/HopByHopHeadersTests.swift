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
        #expect(HopByHopHeaders.removing(from: headers) == [.init("Host", "a"), .init("Accept", "*/*")])
    }

    @Test func progressFraction() {
        #expect(TransferProgress(completed: 50, total: 200).fraction == 0.25)
        #expect(TransferProgress(completed: 50, total: nil).fraction == nil)
        #expect(TransferProgress(completed: 0, total: 0).fraction == 1)
    }

    @Test func controlSocketPathFollowsItsOrderOfSources() {
        let uid: UInt32 = 1000
        #expect(ControlSocketPath.resolve(flag: "/f.sock", environment: ["AFPROXY_CONTROL_SOCKET": "/e"], uid: uid) == "/f.sock")
        #expect(ControlSocketPath.resolve(flag: nil, environment: ["AFPROXY_CONTROL_SOCKET": "/e", "RUNTIME_DIRECTORY": "/r"], uid: uid) == "/e")
        #expect(ControlSocketPath.resolve(flag: nil, environment: ["RUNTIME_DIRECTORY": "/run/afproxy", "XDG_RUNTIME_DIR": "/x"], uid: uid) == "/run/afproxy/control.sock")
        #expect(ControlSocketPath.resolve(flag: nil, environment: ["XDG_RUNTIME_DIR": "/run/user/1000"], uid: uid) == "/run/user/1000/afproxy/control.sock")
        #expect(ControlSocketPath.resolve(flag: nil, environment: [:], uid: uid) == "/tmp/afproxy-1000/control.sock")
    }
}
