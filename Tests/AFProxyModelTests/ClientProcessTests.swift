import Testing

@testable import AFProxyModel

/// The client process as a value: its command line from /proc, its name and label; the slot a
/// lookup fills; a late finding written into the history.
@Suite struct ClientProcessTests {
    @Test func theCommandLineIsTheArgumentsJoinedAndShortened() {
        #expect(ClientProcess.commandLine(fromProc: Array("curl\0-x\0http://p\0".utf8)) == "curl -x http://p")
        #expect(ClientProcess.commandLine(fromProc: []) == nil)
        #expect(ClientProcess.commandLine(fromProc: [0, 0]) == nil)
        // Control characters cannot reach a terminal through `show`; invalid UTF-8 is repaired.
        #expect(ClientProcess.commandLine(fromProc: Array("a\u{1B}[2Jb\nc\0".utf8)) == "a?[2Jb?c")
        #expect(ClientProcess.commandLine(fromProc: [0x61, 0xFF, 0x62]) == "a\u{FFFD}b")
        let long = Array(String(repeating: "x", count: 300).utf8)
        let cut = ClientProcess.commandLine(fromProc: long)
        #expect(cut?.count == ClientProcess.commandLineLimit && cut?.hasSuffix("…") == true)
        #expect(ClientProcess.commandLine(fromProc: Array(String(repeating: "é", count: 120).utf8))?.count == 120)
        #expect(ClientProcess.commandLine(fromProc: Array("abcdef".utf8), limit: 4) == "abc…")
    }

    @Test func theNameIsTheExecutablesFileName() {
        #expect(ClientProcess(pid: 5, executable: "/usr/bin/curl").name == "curl")
        #expect(ClientProcess(pid: 5, executable: "/opt/app/bin/app (deleted)").name == "app")
        #expect(ClientProcess(pid: 5, commandLine: "/usr/bin/python3 -m pip").name == "python3")
        #expect(ClientProcess(uid: 0).name == nil)
    }

    @Test func theLabelSaysWhatIsKnown() {
        #expect(ClientProcess(pid: 12345, executable: "/usr/bin/curl").label == "curl[12345]")
        #expect(ClientProcess(pid: 7).label == "[7]")
        #expect(ClientProcess(user: "alice", uid: 1000).label == "alice")
        #expect(ClientProcess(uid: 1000).label == "uid 1000")
    }

    @Test func aSlotIsSettledOnceAndTellsThoseWaiting() {
        let slot = ClientProcessSlot()
        let heard = Locked<[Int?]>([])
        slot.whenSettled { process in heard.withLock { $0.append(process.pid) } }
        #expect(!slot.isSettled && slot.process == nil)
        slot.settle(ClientProcess(pid: 9))
        slot.settle(ClientProcess(pid: 10))  // a second answer changes nothing
        #expect(slot.isSettled && slot.process?.pid == 9)
        slot.whenSettled { process in heard.withLock { $0.append(process.pid) } }  // at once
        #expect(heard.withLock { $0 } == [9, 9])

        let nothing = ClientProcessSlot()
        nothing.whenSettled { _ in heard.withLock { $0.append(nil) } }
        nothing.settle(nil)
        #expect(heard.withLock { $0 } == [9, 9])
        #expect(ClientProcessSlot(settled: nil).isSettled)
    }

    @Test func whetherTheClientIsOnThisMachine() {
        typealias Endpoint = ConnectionAddresses.Endpoint
        let proxy = Endpoint(address: [192, 168, 1, 5], port: 3128)
        #expect(ConnectionAddresses(local: proxy, peer: Endpoint(address: [127, 0, 0, 2], port: 1)).peerIsLocal)
        #expect(ConnectionAddresses(local: proxy, peer: Endpoint(address: [192, 168, 1, 5], port: 1)).peerIsLocal)
        #expect(!ConnectionAddresses(local: proxy, peer: Endpoint(address: [192, 168, 1, 6], port: 1)).peerIsLocal)
        let mapped = Endpoint(address: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 127, 0, 0, 1], port: 9)
        #expect(mapped.isLoopback && mapped.unmapped == Endpoint(address: [127, 0, 0, 1], port: 9))
        #expect(Endpoint(address: [UInt8](repeating: 0, count: 15) + [1], port: 1).isLoopback)
        #expect(!Endpoint(address: [0xFE, 0x80] + [UInt8](repeating: 0, count: 13) + [1], port: 1).isLoopback)
    }
}
