/// `HOST:PORT`, `[IPV6]:PORT`: one address to listen on.
package struct ListenAddress: Sendable, Equatable {
    package var host: String
    package var port: Int

    package static func parse(_ text: String) throws(ConfigurationError) -> ListenAddress {
        let host: Substring
        let port: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]"), text[text.index(after: close)...].hasPrefix(":") else {
                throw ConfigurationError("listen address \(text) is not [IPV6]:PORT")
            }
            host = text[text.index(after: text.startIndex)..<close]
            port = text[text.index(close, offsetBy: 2)...]
        } else {
            guard let colon = text.lastIndex(of: ":") else {
                throw ConfigurationError("listen address \(text) is not HOST:PORT")
            }
            host = text[..<colon]
            port = text[text.index(after: colon)...]
        }
        guard !host.isEmpty, let number = Int(port), (0...65535).contains(number) else {
            throw ConfigurationError("listen address \(text) is not HOST:PORT with a port in 0...65535")
        }
        return ListenAddress(host: String(host), port: number)
    }
}
