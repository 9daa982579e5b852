/// Header fields in the order they were received, names as sent. A plain list rather than a
/// dictionary because a proxy must keep order and repeated fields.
public typealias HTTPHeaderList = [HTTPHeaderField]

public struct HTTPHeaderField: Sendable, Codable, Equatable {
    public var name: String
    public var value: String

    public init(_ name: String, _ value: String) {
        self.name = name
        self.value = value
    }
}

extension Array where Element == HTTPHeaderField {
    /// The values of every field named `name`, compared case-insensitively.
    public func values(_ name: String) -> [String] {
        self.filter { $0.name.lowercased() == name }.map(\.value)
    }

    public func first(_ name: String) -> String? {
        self.first { $0.name.lowercased() == name }?.value
    }
}
