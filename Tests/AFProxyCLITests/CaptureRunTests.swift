import AFProxyAPI
import Testing

@testable import AFProxyCLI

#if canImport(Glibc)
import Glibc
#endif

/// The parts of `afproxyctl run` that need no namespace: which setting refuses user namespaces,
/// where the capture socket is, the descriptors over a socket pair, the capture filter.
@Suite struct CaptureRunTests {
    @Test func theSettingThatRefusesIsNamed() {
        func refusal(uid: uid_t, _ values: [String: String]) -> String? {
            UserNamespaceCheck.refusal(uid: uid) { values[$0] }
        }
        #expect(refusal(uid: 1000, [:]) == nil)
        #expect(
            refusal(uid: 1000, ["/proc/sys/user/max_user_namespaces": "0"])?.contains("user.max_user_namespaces=0")
                == true)
        #expect(
            refusal(uid: 1000, ["/proc/sys/kernel/unprivileged_userns_clone": "0"])?.contains(
                "unprivileged_userns_clone") == true)
        #expect(refusal(uid: 0, ["/proc/sys/kernel/unprivileged_userns_clone": "0"]) == nil)
        let apparmor = refusal(uid: 1000, ["/proc/sys/kernel/apparmor_restrict_unprivileged_userns": "1"])
        #expect(apparmor?.contains("AppArmor") == true)
    }

    @Test func theCaptureSocketIsBesideTheControlSocket() {
        #expect(CaptureSocketPath.forControlSocket("/run/afproxy/control.sock") == "/run/afproxy/capture.sock")
        #expect(CaptureSocketPath.forControlSocket("/tmp/t/control-00.sock") == "/tmp/t/control-00.sock.capture")
    }

    @Test func descriptorsTravelWithTheMessage() throws {
        var pair: [Int32] = [-1, -1]
        #expect(socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue), 0, &pair) == 0)
        defer { for end in pair { close(end) } }
        var pipeEnds: [Int32] = [-1, -1]
        #expect(pipe(&pipeEnds) == 0)
        #expect(DescriptorPassing.send(pair[0], bytes: Array("ready".utf8), descriptors: pipeEnds) == 0)
        let message = try DescriptorPassing.receive(pair[1], maxBytes: 64).get()
        #expect(message.bytes == Array("ready".utf8) && message.descriptors.count == 2)
        // The received write end reaches the original read end.
        #expect(write(message.descriptors[1], "x", 1) == 1)
        var byte: UInt8 = 0
        #expect(read(pipeEnds[0], &byte, 1) == 1 && byte == UInt8(ascii: "x"))
        for descriptor in pipeEnds + message.descriptors { close(descriptor) }
        close(pair[0])
        pair[0] = -1
        #expect(try DescriptorPassing.receive(pair[1], maxBytes: 64).get().bytes.isEmpty)  // the peer closed
    }

    @Test func aCaptureIsFilteredByNameOrId() {
        let captured = ClientProcess(pid: 7, executable: "/usr/bin/node", capture: CaptureLabel(id: 3, name: "api"))
        #expect(ProcessFilter(capture: "api").matches(captured))
        #expect(ProcessFilter(capture: "3").matches(captured))
        #expect(!ProcessFilter(capture: "4").matches(captured))
        #expect(!ProcessFilter(capture: "api").matches(ClientProcess(pid: 8)))
        #expect(ProcessFilter(process: "node", capture: "api").matches(captured))
    }

    @Test func theRulesetRedirectsTCPAndDNSAndRefusesOtherUDP() {
        let rules = CaptureNamespace.ruleset(tcpPort: 41000, udpPort: 42000)
        #expect(rules.contains("meta l4proto tcp redirect to :41000"))
        #expect(rules.contains("udp dport 53 redirect to :42000"))
        #expect(rules.contains("udp dport != 53 ct state new reject"))
    }
}
