import AFProxyModel

/// The web dashboard's access token: 32 random bytes from the system's generator (getrandom on
/// Linux), in hex so it fits a URL, a cookie and a header without escaping. A new one at every
/// start, so a token seen once stops working when the daemon restarts.
package enum WebToken {
    package static func random() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }.hexString
    }
}
