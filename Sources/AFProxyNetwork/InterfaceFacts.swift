import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// What `/sys/class/net/IF` says about an interface, for `InterfaceKind`. Read when the chosen
/// interface changes, not on every notification. `root` is a parameter so a test can lay out a
/// directory of its own.
package struct InterfaceFacts: Sendable, Equatable {
    /// `IF/wireless` exists (the wireless extensions' directory).
    package var hasWireless = false
    /// `IF/phy80211` exists (a cfg80211 device).
    package var hasPhy80211 = false
    /// `IF/device` exists: the interface belongs to a bus device, not software.
    package var hasDevice = false
    /// `DEVTYPE=` in `IF/uevent` (`wlan`, `wwan`, `bridge`, …), when there is one.
    package var deviceType: String?

    package init(
        hasWireless: Bool = false, hasPhy80211: Bool = false, hasDevice: Bool = false, deviceType: String? = nil
    ) {
        self.hasWireless = hasWireless
        self.hasPhy80211 = hasPhy80211
        self.hasDevice = hasDevice
        self.deviceType = deviceType
    }

    package static func read(interface name: String, root: String = "/sys/class/net") -> InterfaceFacts {
        // An interface name never holds a slash; one that did could not name a sysfs entry.
        guard !name.isEmpty, !name.contains("/"), name != ".", name != ".." else { return InterfaceFacts() }
        let directory = root + "/" + name
        func exists(_ entry: String) -> Bool { access(directory + "/" + entry, F_OK) == 0 }
        return InterfaceFacts(
            hasWireless: exists("wireless"), hasPhy80211: exists("phy80211"), hasDevice: exists("device"),
            deviceType: Self.deviceType(uevent: Self.readSmallFile(directory + "/uevent")))
    }

    /// The `DEVTYPE=` line of a uevent file's `KEY=value` lines.
    package static func deviceType(uevent: String?) -> String? {
        guard let uevent else { return nil }
        for line in uevent.split(separator: "\n") where line.hasPrefix("DEVTYPE=") {
            return String(line.dropFirst("DEVTYPE=".count))
        }
        return nil
    }

    /// A sysfs attribute file; nil when it cannot be read.
    private static func readSmallFile(_ path: String) -> String? {
        (try? Data(contentsOf: URL(fileURLWithPath: path))).map { String(decoding: $0, as: UTF8.self) }
    }
}
