/// The status of the origin's answer to an upgrade request, read from the first bytes it sends
/// (`HTTP/1.1 101 Switching Protocols`), however they are split. Only the status line is read:
/// the rest passes through the relay untouched.
package struct UpgradeAnswer: Sendable, Equatable {
    package enum Outcome: Sendable, Equatable {
        /// The status line has not ended yet.
        case pending
        case status(Int)
        /// Not an HTTP/1.x status line.
        case malformed
    }

    /// A status line is short; one longer than this is not one.
    static let limit = 1024

    private var line: [UInt8] = []
    package private(set) var outcome = Outcome.pending

    package init() {}

    package mutating func read(_ bytes: some Sequence<UInt8>) -> Outcome {
        guard self.outcome == .pending else { return self.outcome }
        for byte in bytes {
            if byte == UInt8(ascii: "\n") {
                self.outcome = Self.status(of: self.line)
                return self.outcome
            }
            self.line.append(byte)
            if self.line.count > Self.limit {
                self.outcome = .malformed
                return self.outcome
            }
        }
        return .pending
    }

    /// `HTTP/1.x SSS[ reason][CR]` (RFC 9112 §4).
    private static func status(of line: [UInt8]) -> Outcome {
        let prefix = Array("HTTP/1.".utf8)
        guard line.count >= 12, Array(line[0..<7]) == prefix, (48...57).contains(line[7]),
            line[8] == UInt8(ascii: " ")
        else { return .malformed }
        let digits = line[9..<12]
        guard digits.allSatisfy({ (48...57).contains($0) }),
            line.count == 12 || line[12] == UInt8(ascii: " ") || line[12] == UInt8(ascii: "\r")
        else { return .malformed }
        return .status(digits.reduce(0) { $0 * 10 + Int($1 - 48) })
    }
}
