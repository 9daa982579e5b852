import AFProxyModel
import Testing

@Suite struct LockedTests {
    @Test func excludesConcurrentWriters() async {
        let counter = Locked(0)
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    for _ in 0..<10_000 { counter.withLock { $0 += 1 } }
                }
            }
        }
        #expect(counter.withLock { $0 } == 80_000)
    }

    @Test func passesTypedErrorsThrough() {
        struct Refused: Error, Equatable {}
        let value = Locked([1])
        #expect(throws: Refused()) { try value.withLock { (_: inout [Int]) throws(Refused) in throw Refused() } }
        #expect(value.withLock { $0 } == [1])
    }
}
