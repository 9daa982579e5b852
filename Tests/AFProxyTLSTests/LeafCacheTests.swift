import Testing

@testable import AFProxyTLS

@Suite struct LeafCacheTests {
    @Test func theLeastRecentlyUsedGoesFirst() {
        var cache = LeafCache<Int>(capacity: 2)
        cache.insert(1, for: "a")
        cache.insert(2, for: "b")
        #expect(cache.value(for: "a") == 1)
        cache.insert(3, for: "c")
        #expect(cache.count == 2 && cache.contains("a") && !cache.contains("b") && cache.contains("c"))
        cache.insert(4, for: "a")  // replacing evicts nothing
        #expect(cache.count == 2 && cache.value(for: "a") == 4 && cache.contains("c"))
    }

    @Test func namesAreFoldedAndAddressesRecognised() {
        #expect(HostName("Example.COM.") == .dns("example.com"))
        #expect(HostName("10.0.0.1") == .ip("10.0.0.1", bytes: [10, 0, 0, 1]))
        #expect(HostName("[::1]") == .ip("::1", bytes: Array(repeating: 0, count: 15) + [1]))
        #expect(HostName("1.2.3") == .dns("1.2.3"))
    }
}
