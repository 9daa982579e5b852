import AFProxyModel

/// The file name a URL gives a download without `-o`.
enum DownloadURL {
    /// The last path segment, percent-decoded, or `.some(nil)` when the path names none; nil
    /// when the URL is not http(s) with a host.
    static func fileName(of url: String) -> String?? {
        let lower = url.lowercased()
        guard let scheme = ["http://", "https://"].first(where: { lower.hasPrefix($0) }) else { return nil }
        let rest = url.dropFirst(scheme.count)
        guard !url.utf8.contains(where: { $0 <= 0x20 || $0 == 0x7F }) else { return nil }
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? rest.endIndex
        guard authorityEnd > rest.startIndex else { return nil }
        var path = rest[authorityEnd...]
        if let end = path.firstIndex(where: { $0 == "?" || $0 == "#" }) { path = path[..<end] }
        let segment = path.split(separator: "/", omittingEmptySubsequences: false).last.map(String.init) ?? ""
        let decoded = PercentDecoding.decode(segment)
        guard !decoded.isEmpty, decoded != ".", decoded != "..", !decoded.contains("/"), !decoded.contains("\0")
        else { return .some(nil) }
        return .some(decoded)
    }

}
