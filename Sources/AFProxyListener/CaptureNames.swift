import AFProxyModel
import NIOConcurrencyHelpers

/// Which name each address was asked as, in one capture: its resolver (`CaptureResolver`)
/// writes what it answered, and a connection to the address is named by it, also when the
/// connection is neither HTTP nor TLS and so carries no name of its own. Several names with
/// one address (a CDN, the tests' 127.0.0.1): the latest asked wins, which is the one the
/// program most likely connects to next.
package final class CaptureNames: Sendable {
    private let names = NIOLockedValueBox([IPAddress: String]())

    /// More addresses than a program asks for in a run: beyond it the book starts again.
    static let limit = 65_536

    package init() {}

    func remember(_ name: String, for addresses: [IPAddress]) {
        self.names.withLockedValue { names in
            if names.count + addresses.count > Self.limit { names.removeAll() }
            for address in addresses { names[address] = name }
        }
    }

    func name(of address: IPAddress) -> String? {
        self.names.withLockedValue { $0[address] }
    }
}
