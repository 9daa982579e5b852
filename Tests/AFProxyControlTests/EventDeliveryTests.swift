import AFProxyAPI
import AFProxyControl
import AFProxyModel
import FoundationEssentials
import Testing

@Suite struct EventDeliveryTests {
    @Test func aReaderThatKeepsUpMissesNothing() {
        var delivery = EventDelivery(capacity: 2)
        for _ in 0..<10 {
            let offered = delivery.offer()
            let write = delivery.dequeue(writable: true)
            #expect(offered && write == .write)
        }
        let missed = delivery.becameWritable()
        #expect(delivery.missed == 0 && missed == nil)
    }

    @Test func theQueueToTheEventLoopIsBounded() {
        var delivery = EventDelivery(capacity: 3)
        let offered = (0..<10).map { _ in delivery.offer() }
        #expect(offered == [true, true, true] + Array(repeating: false, count: 7))
        #expect(delivery.queued == 3)
        let writes = (0..<3).map { _ in delivery.dequeue(writable: true) }
        #expect(writes == [.writeAfterMissed(7), .write, .write])
        #expect(delivery.queued == 0)
    }

    /// Every event is either written or counted in a `missed` line: none vanishes.
    @Test func aStoppedReaderLearnsHowManyItMissedWhenItReadsAgain() {
        var delivery = EventDelivery(capacity: 4)
        var written = 0
        var reported = 0
        func settle(_ write: EventDelivery.Write) {
            switch write {
            case .drop: break
            case .write: written += 1
            case .writeAfterMissed(let count):
                reported += count
                written += 1
            }
        }
        for _ in 0..<5 { if delivery.offer() { settle(delivery.dequeue(writable: true)) } }
        for _ in 0..<100 { if delivery.offer() { settle(delivery.dequeue(writable: false)) } }
        reported += delivery.becameWritable() ?? 0
        let again = delivery.becameWritable()
        #expect(again == nil)
        for _ in 0..<3 { if delivery.offer() { settle(delivery.dequeue(writable: true)) } }
        #expect(written == 8)
        #expect(reported == 100)
        #expect(written + reported == 108)
    }

    @Test func theMissedLineIsItsOwnEvent() throws {
        let json = String(decoding: try JSONEncoder.api().encode(StreamEvent.missed(MissedEvents(42))), as: UTF8.self)
        #expect(json == #"{"event":"missed","missed":42}"#)
        #expect(try JSONDecoder().decode(StreamEvent.self, from: Data(json.utf8)) == .missed(MissedEvents(42)))
    }
}
