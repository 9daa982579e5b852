/// The web dashboard's access token: 32 random bytes from the system's generator (getrandom on
/// Linux), in hex so it fits a URL, a cookie and a header without escaping. A new one at every
/// start, so a token seen once stops working when the daemon restarts.
package enum WebToken {
    package static func random() -> String {
        var generator = SystemRandomNumberGenerator()
        let hex = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(64)
        for _ in 0..<32 {
            let byte = UInt8.random(in: 0...255, using: &generator)
            text.append(hex[Int(byte >> 4)])
            text.append(hex[Int(byte & 0xF)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
