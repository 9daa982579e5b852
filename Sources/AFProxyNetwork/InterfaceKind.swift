/// What kind of interface the default route uses, as AFNetworkReachabilityManager tells Wi-Fi
/// from WWAN: decided from facts sysfs gives (`InterfaceFacts`), so the rule is tested without
/// a machine that has each kind.
package enum InterfaceKind: String, Sendable, Equatable {
    case ethernet
    case wifi
    case wwan
    case other

    /// `hardwareType` is the link's `ARPHRD_*` (1: Ethernet; Wi-Fi and many modems say 1 too,
    /// which is why sysfs is asked first).
    package static func classify(name: String, hardwareType: UInt16, facts: InterfaceFacts) -> InterfaceKind {
        if facts.hasWireless || facts.hasPhy80211 || facts.deviceType == "wlan" { return .wifi }
        if name.hasPrefix("wwan") || facts.deviceType == "wwan" { return .wwan }
        // A physical Ethernet card has a `device` link to its bus device; veth, bridges, bonds
        // and tunnels do not.
        if hardwareType == 1 && facts.hasDevice { return .ethernet }
        return .other
    }
}
