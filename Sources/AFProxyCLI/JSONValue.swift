import FoundationEssentials

/// Any JSON value, for `afproxyctl rules`, which shows and sends the rules of every kind without
/// knowing their types: the wire API has none for a kind added after this afproxyctl was built,
/// and needs none, since the daemon answers what a kind takes (`GET /v1/rules`).
enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    case int(Int)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    /// The value of a `FIELD=VALUE` argument: `true` and `false` are booleans, a JSON number is a
    /// number, and anything else a string; so is a value in double quotes, without them (`"123"`
    /// is the string 123), for a field that takes text that looks like a number.
    init(argument text: String) {
        if text.count >= 2, text.first == "\"", text.last == "\"" {
            self = .string(String(text.dropFirst().dropLast()))
        } else if text == "true" || text == "false" {
            self = .bool(text == "true")
        } else if Self.isNumber(text), let int = Int(text) {
            self = .int(int)
        } else if Self.isNumber(text), let double = Double(text) {
            self = .double(double)
        } else {
            self = .string(text)
        }
    }

    /// As a table cell: text as it is, `-` for null, anything nested as compact JSON.
    var cell: String {
        switch self {
        case .null: return "-"
        case .bool(let value): return String(value)
        case .int(let value): return String(value)
        case .double(let value): return String(value)
        case .string(let value): return value
        case .array, .object:
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            return (try? encoder.encode(self)).map { String(decoding: $0, as: UTF8.self) } ?? "?"
        }
    }

    /// JSON's number syntax (RFC 8259 §6), which `Double(_:)` is looser than (`inf`, `0x1p3`).
    private static func isNumber(_ text: String) -> Bool {
        var bytes = Substring(text).utf8[...]
        func digits() -> Int {
            let count = bytes.prefix { (0x30...0x39).contains($0) }.count
            bytes = bytes.dropFirst(count)
            return count
        }
        if bytes.first == UInt8(ascii: "-") { bytes = bytes.dropFirst() }
        let first = bytes.first
        let whole = digits()
        guard whole == 1 || (whole > 1 && first != UInt8(ascii: "0")) else { return false }
        if bytes.first == UInt8(ascii: ".") {
            bytes = bytes.dropFirst()
            guard digits() > 0 else { return false }
        }
        if bytes.first == UInt8(ascii: "e") || bytes.first == UInt8(ascii: "E") {
            bytes = bytes.dropFirst()
            if bytes.first == UInt8(ascii: "+") || bytes.first == UInt8(ascii: "-") { bytes = bytes.dropFirst() }
            guard digits() > 0 else { return false }
        }
        return bytes.isEmpty
    }
}

extension JSONValue: Codable {
    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int.self) {
            self = .int(value)
        } else if let value = try? container.decode(Double.self) {
            self = .double(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .int(let value): try container.encode(value)
        case .double(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }
}
