import AFProxyAPI
import FoundationEssentials

/// `afproxyctl show --messages ID`: one line a WebSocket message, `time → sent` or `← received`,
/// its opcode, size and a preview of its payload (text up to `previewLength` characters, control
/// characters shown as `.`; hex for anything else), so a conversation reads top to bottom.
struct MessageLines {
    static let previewLength = 80

    var list: MessageList

    func render() -> String {
        var lines: [String] = []
        if self.list.dropped > 0 {
            lines.append("(\(self.list.dropped) older message(s) let go to keep the bounds)")
        }
        for message in self.list.messages {
            let arrow = message.direction == "sent" ? "→ sent    " : "← received"
            let time = message.at.formatted(.iso8601)
            let opcode = message.opcode.rightPadded(to: 6)
            let size = Formatting.bytes(message.size).rightPadded(to: 9)
            lines.append("\(time) \(arrow) \(opcode) \(size) \(Self.preview(message))")
        }
        if self.list.messages.isEmpty { lines.append("(no messages yet)") }
        return lines.joined(separator: "\n")
    }

    static func preview(_ message: MessageList.Message) -> String {
        guard let encoded = message.payload else { return "(payload not kept)" }
        let bytes = [UInt8](Data(base64Encoded: encoded) ?? Data())
        let more = message.cut || bytes.count > Self.previewLength ? "…" : ""
        if message.opcode == "text", let text = String(validating: bytes, as: UTF8.self) ?? Self.cutUTF8(bytes) {
            let shown = text.prefix(Self.previewLength).map { $0.isASCII && ($0.asciiValue! < 32) ? "." : String($0) }
            return shown.joined() + (text.count > Self.previewLength ? "…" : message.cut ? "…" : "")
        }
        let hex = bytes.prefix(Self.previewLength / 3).map { String($0, radix: 16).leftPadded(to: 2) }
        return hex.joined(separator: " ") + more
    }

    /// A text payload kept cut may end inside a character: its whole ones.
    private static func cutUTF8(_ bytes: [UInt8]) -> String? {
        for drop in 1...3 where bytes.count >= drop {
            if let text = String(validating: bytes.dropLast(drop), as: UTF8.self) { return text }
        }
        return nil
    }
}

extension String {
    fileprivate func rightPadded(to length: Int) -> String {
        self + String(repeating: " ", count: max(0, length - self.count))
    }

    fileprivate func leftPadded(to length: Int) -> String {
        String(repeating: "0", count: max(0, length - self.count)) + self
    }
}
