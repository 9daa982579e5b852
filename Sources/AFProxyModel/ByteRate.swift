/// A rate in bytes per second, as people write it: `500K`, `2M`, `1.5MiB`, `750000`. The
/// suffixes `K`, `M`, `G` (also `KB`, `MB`, `GB`, any case) are SI, powers of 1000; `KiB`,
/// `MiB`, `GiB` are binary, powers of 1024; a trailing `/s` is allowed. SI for the short forms
/// because that is what curl's `--limit-rate` and network people mean by `1M` of bandwidth, and
/// the binary forms are there for who means 1,048,576.
package struct ByteRate: Sendable, Hashable, Comparable, CustomStringConvertible {
    package let bytesPerSecond: Int64

    /// The largest rate accepted, 100 GB/s: more is no limit at all, and bounds the arithmetic.
    package static let maximum: Int64 = 100_000_000_000

    package init(bytesPerSecond: Int64) {
        precondition(bytesPerSecond > 0 && bytesPerSecond <= Self.maximum)
        self.bytesPerSecond = bytesPerSecond
    }

    /// Throws the reason a person should read when `text` is not a rate.
    package init(parsing text: some StringProtocol) throws(ByteRateError) {
        var body = text.trimmingCharacters(in: " \t")
        if body.lowercased().hasSuffix("/s") { body.removeLast(2) }
        let split = body.firstIndex { !($0.isASCII && ($0.isNumber || $0 == ".")) } ?? body.endIndex
        let number = body[..<split]
        let unit = body[split...].lowercased()
        let multiplier: Double
        switch unit {
        case "", "b": multiplier = 1
        case "k", "kb": multiplier = 1e3
        case "m", "mb": multiplier = 1e6
        case "g", "gb": multiplier = 1e9
        case "kib": multiplier = 1024
        case "mib": multiplier = 1024 * 1024
        case "gib": multiplier = 1024 * 1024 * 1024
        default: throw ByteRateError(text)
        }
        guard !number.isEmpty, number.filter({ $0 == "." }).count <= 1, let value = Double(number) else {
            throw ByteRateError(text)
        }
        let bytes = (value * multiplier).rounded()
        guard bytes >= 1 else {
            throw ByteRateError(message: "a rate must be at least 1 byte per second, got \(text.prefix(40))")
        }
        guard bytes <= Double(Self.maximum) else {
            throw ByteRateError(message: "a rate must be at most 100G, got \(text.prefix(40))")
        }
        self.bytesPerSecond = Int64(bytes)
    }

    package static func < (lhs: ByteRate, rhs: ByteRate) -> Bool { lhs.bytesPerSecond < rhs.bytesPerSecond }

    /// How a person reads it back: a whole number of the largest SI unit (`500K`, `2M`), else of
    /// a binary one to a tenth (`1.5MiB`), else the largest SI unit to three decimals (`1.234K`).
    package var description: String {
        let value = self.bytesPerSecond
        let si = [("G", Int64(1_000_000_000)), ("M", 1_000_000), ("K", 1000)].first { value >= $0.1 }
        if let (suffix, unit) = si, value % unit == 0 { return "\(value / unit)\(suffix)" }
        for (suffix, unit) in [("GiB", Int64(1) << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)] where value >= unit {
            if (value * 10) % unit == 0 { return Self.decimal(value, unit) + suffix }
        }
        if let (suffix, unit) = si { return Self.decimal(value, unit) + suffix }
        return "\(value)"
    }

    /// `value / unit` with up to three decimals, trailing zeros dropped.
    private static func decimal(_ value: Int64, _ unit: Int64) -> String {
        let thousandths = (value * 1000 + unit / 2) / unit
        var text = "\(thousandths / 1000)"
        var fraction = String(thousandths % 1000)
        while fraction.count < 3 { fraction = "0" + fraction }
        while fraction.hasSuffix("0") { fraction.removeLast() }
        if !fraction.isEmpty { text += "." + fraction }
        return text
    }
}

package struct ByteRateError: Error, Sendable, Equatable, CustomStringConvertible {
    package var message: String
    package init(message: String) { self.message = message }
    init(_ text: some StringProtocol) {
        self.message =
            "expected a rate in bytes per second such as 500K, 2M or 1.5MiB (K, M, G: 1000; KiB, MiB, GiB: 1024), got \(text.prefix(40))"
    }
    package var description: String { self.message }
}

extension StringProtocol {
    fileprivate func trimmingCharacters(in set: String) -> String {
        var slice = Substring(self)
        while let first = slice.first, set.contains(first) { slice.removeFirst() }
        while let last = slice.last, set.contains(last) { slice.removeLast() }
        return String(slice)
    }
}
