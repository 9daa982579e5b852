/// Which ports a CONNECT may reach. 443 by default, as Squid's `SSL_ports`: a tunnel carries
/// anything, so an open one to port 25 makes the proxy a spam relay. `allow-connect-port` adds
/// ports; `*` allows any.
package struct ConnectPortPolicy: Sendable, Equatable, CustomStringConvertible {
    package private(set) var ports: Set<Int>
    package private(set) var allowsAnyPort: Bool

    package init(ports: Set<Int> = [443], allowsAnyPort: Bool = false) {
        self.ports = ports
        self.allowsAnyPort = allowsAnyPort
    }

    package static let `default` = ConnectPortPolicy()

    package func allows(_ port: Int) -> Bool {
        self.allowsAnyPort || self.ports.contains(port)
    }

    /// Adds `text`, a port (1–65535) or `*`; answers false, changing nothing, for anything else.
    package mutating func allow(_ text: String) -> Bool {
        if text == "*" {
            self.allowsAnyPort = true
            return true
        }
        guard !text.isEmpty, text.utf8.count <= 5, text.utf8.allSatisfy({ (48...57).contains($0) }),
            let port = Int(text), (1...65535).contains(port)
        else { return false }
        self.ports.insert(port)
        return true
    }

    /// "443, 8443", or "any" once `*` was given: what a 403 names.
    package var description: String {
        self.allowsAnyPort ? "any" : self.ports.sorted().map(String.init).joined(separator: ", ")
    }
}
