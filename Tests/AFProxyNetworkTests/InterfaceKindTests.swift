import AFProxyTestSupport
import FoundationEssentials
import Testing

@testable import AFProxyNetwork

#if canImport(Glibc)
import Glibc
#endif

/// The kind from sysfs facts, and the facts from a directory laid out like /sys/class/net.
@Suite struct InterfaceKindTests {
    @Test func wirelessOrPhy80211IsWifi() {
        #expect(InterfaceKind.classify(name: "wlp2s0", hardwareType: 1, facts: .init(hasWireless: true)) == .wifi)
        #expect(
            InterfaceKind.classify(name: "wlan0", hardwareType: 1, facts: .init(hasPhy80211: true, hasDevice: true))
                == .wifi)
    }

    @Test func aModemIsWwanByNameOrDeviceType() {
        #expect(InterfaceKind.classify(name: "wwan0", hardwareType: 519, facts: .init()) == .wwan)
        #expect(
            InterfaceKind.classify(name: "usb0", hardwareType: 1, facts: .init(hasDevice: true, deviceType: "wwan"))
                == .wwan)
    }

    @Test func ethernetNeedsADevice() {
        #expect(InterfaceKind.classify(name: "enp3s0", hardwareType: 1, facts: .init(hasDevice: true)) == .ethernet)
        #expect(InterfaceKind.classify(name: "veth0", hardwareType: 1, facts: .init()) == .other)
        #expect(InterfaceKind.classify(name: "tun0", hardwareType: 65534, facts: .init(hasDevice: true)) == .other)
    }

    @Test func theDeviceTypeComesFromTheUeventLines() {
        #expect(InterfaceFacts.deviceType(uevent: "DEVTYPE=wlan\nINTERFACE=wlan0\nIFINDEX=3\n") == "wlan")
        #expect(InterfaceFacts.deviceType(uevent: "INTERFACE=eth0\nIFINDEX=2\n") == nil)
    }

    @Test func factsAreReadFromTheDirectory() throws {
        // Removed in the process, never by system("rm -rf"): a child process, until its exec,
        // holds every socket the test process has open, and ClientProcessFinderTests, running
        // beside this, then finds it.
        let scratch = TemporaryDirectory("sysfs")
        let root = scratch.path
        #expect(mkdir(root + "/wlan0", 0o755) == 0)
        #expect(mkdir(root + "/wlan0/phy80211", 0o755) == 0)
        #expect(mkdir(root + "/wlan0/device", 0o755) == 0)
        let uevent = "DEVTYPE=wlan\nINTERFACE=wlan0\n"
        let fd = open(root + "/wlan0/uevent", O_WRONLY | O_CREAT, 0o644)
        _ = uevent.withCString { write(fd, $0, strlen($0)) }
        close(fd)
        #expect(
            InterfaceFacts.read(interface: "wlan0", root: root)
                == InterfaceFacts(hasPhy80211: true, hasDevice: true, deviceType: "wlan"))
        #expect(InterfaceFacts.read(interface: "../etc", root: root) == InterfaceFacts())
        #expect(InterfaceFacts.read(interface: "eth9", root: root) == InterfaceFacts())
    }
}
