import AFProxyAPI
import AFProxyModel
import FoundationEssentials
import Testing

/// The event stream's lines: task events keep their JSON, network events have no task, and a
/// reader tells them apart by the event's name.
@Suite struct StreamEventTests {
    func encoder() -> JSONEncoder {
        JSONEncoder.api()
    }

    func decoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }

    let record = TaskRecord(
        id: 4, kind: .data, state: .running, method: "GET", url: "http://h/", client: "c",
        createdAt: Date(timeIntervalSince1970: 0))

    @Test func aTaskEventIsEncodedExactlyAsBefore() throws {
        let event = TaskEvent(.created, task: self.record)
        #expect(try self.encoder().encode(StreamEvent.task(event)) == (try self.encoder().encode(event)))
        let decoded = try self.decoder().decode(StreamEvent.self, from: try self.encoder().encode(event))
        #expect(decoded == .task(event))
    }

    @Test func aNetworkEventHasItsNetworkAndNoTask() throws {
        let network = Reachability(
            status: .reachable, interface: "eth0", interfaceKind: "ethernet",
            changedAt: Date(timeIntervalSince1970: 1_700_000_000))
        let json = String(
            decoding: try self.encoder().encode(StreamEvent.network(.init(.networkRestored, network: network))),
            as: UTF8.self)
        #expect(
            json
                == #"{"event":"network-restored","network":{"changedAt":"2023-11-14T22:13:20Z","interface":"eth0","interfaceKind":"ethernet","status":"reachable"}}"#
        )
        #expect(
            try self.decoder().decode(StreamEvent.self, from: Data(json.utf8))
                == .network(.init(.networkRestored, network: network)))
        let lost =
            #"{"event":"network-lost","network":{"changedAt":null,"interface":null,"interfaceKind":null,"status":"unreachable"}}"#
        #expect(
            try self.decoder().decode(StreamEvent.self, from: Data(lost.utf8))
                == .network(.init(.networkLost, network: Reachability(status: .unreachable))))
    }

    @Test func onlyAChangeOfStatusToOrFromUnreachableIsAnEvent() {
        #expect(NetworkEvent.between(.reachable, .unreachable) == .networkLost)
        #expect(NetworkEvent.between(.unknown, .unreachable) == .networkLost)
        #expect(NetworkEvent.between(.unreachable, .reachable) == .networkRestored)
        #expect(NetworkEvent.between(.unknown, .reachable) == nil)
        #expect(NetworkEvent.between(.reachable, .reachable) == nil)
        #expect(NetworkEvent.between(.unreachable, .unknown) == nil)
    }
}
