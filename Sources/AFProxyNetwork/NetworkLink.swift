import CNetlink

/// One interface as `RTM_NEWLINK` describes it (`struct ifinfomsg` and its attributes): what the
/// decision needs to call it up, and its hardware type for the kind.
package struct NetworkLink: Sendable, Equatable {
    package var index: Int32
    package var name: String
    /// `IFF_*`.
    package var flags: UInt32
    /// `ARPHRD_*` (1: Ethernet).
    package var hardwareType: UInt16
    /// RFC 2863 operational state (`IF_OPER_*`), when the kernel sent one.
    package var operationalState: UInt8?

    package init(index: Int32, name: String, flags: UInt32, hardwareType: UInt16 = 1, operationalState: UInt8? = nil) {
        self.index = index
        self.name = name
        self.flags = flags
        self.hardwareType = hardwareType
        self.operationalState = operationalState
    }

    /// Administratively up, and carrying traffic: operstate up or unknown (virtual interfaces
    /// without a carrier notion say unknown) when the kernel reports it, else `IFF_RUNNING`.
    /// Dormant (Wi-Fi not yet associated), down or lower-layer-down is not up.
    package var isUp: Bool {
        guard self.flags & UInt32(IFF_UP.rawValue) != 0 else { return false }
        if let state = self.operationalState {
            return state == UInt8(IF_OPER_UP) || state == UInt8(IF_OPER_UNKNOWN)
        }
        return self.flags & UInt32(IFF_RUNNING.rawValue) != 0
    }

    /// `ifinfomsg` is 16 bytes: family, pad, type (u16), index (i32), flags (u32), change (u32).
    static let headerSize = 16

    /// The link in a `RTM_NEWLINK` / `RTM_DELLINK` payload; nil if it is too short or nameless.
    init?(payload: ArraySlice<UInt8>) {
        guard let type = payload.integer(at: 2, as: UInt16.self),
            let index = payload.integer(at: 4, as: Int32.self),
            let flags = payload.integer(at: 8, as: UInt32.self),
            payload.count >= Self.headerSize
        else { return nil }
        let attributes = NetlinkAttributes(payload.tail(from: Self.headerSize))
        guard let name = attributes.string(Int32(IFLA_IFNAME)) else { return nil }
        self.init(
            index: index, name: name, flags: flags, hardwareType: type,
            operationalState: attributes.integer(Int32(IFLA_OPERSTATE)))
    }
}
