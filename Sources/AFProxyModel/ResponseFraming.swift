/// How a response head from an origin frames its body, checked against RFC 9112 §6.3 before any
/// of it is passed on. A proxy that forwards framing it did not check hands its client a message
/// the client may read differently than curl did: two lengths, a `+5`, a length beside chunked.
/// Such a head is an error the proxy answers with 502; nothing of it reaches the client.
package enum ResponseFraming {
    /// The head with its framing fields made unambiguous: identical `Content-Length` values
    /// merged into one field, and `Content-Length` removed where `Transfer-Encoding` overrides
    /// it (§6.3 item 3). Fails with the reason when the framing is invalid or conflicting.
    package static func normalize(_ head: ProxyResponseHead) -> Result<ProxyResponseHead, FramingError> {
        var lengths: [Substring] = []
        var codings: [String] = []
        for field in head.headers {
            if field.hasName("content-length") {
                lengths += field.value.split(separator: ",", omittingEmptySubsequences: false).map {
                    $0.trimmingSpaces()
                }
            } else if field.hasName("transfer-encoding") {
                codings += field.value.split(separator: ",").map { $0.trimmingSpaces().lowercased() }.filter {
                    !$0.isEmpty
                }
            }
        }
        for length in lengths
        where length.isEmpty || !length.utf8.allSatisfy({ (48...57).contains($0) }) || length.utf8.count > 18 {
            return .failure(FramingError("invalid Content-Length: \(length.prefix(32))"))
        }
        if let first = lengths.first, let other = lengths.first(where: { $0 != first }) {
            return .failure(FramingError("conflicting Content-Length values \(first) and \(other)"))
        }
        // `chunked, chunked`: RFC 9112 §6.1 forbids applying chunked twice, yet curl reads it as
        // one chunked coding and so does afproxy, which frames the body anew for its client: the
        // repeats are dropped, and the client is told of the one coding it gets.
        var repeated = false
        while codings.count > 1, codings[codings.count - 1] == "chunked", codings[codings.count - 2] == "chunked" {
            codings.removeLast()
            repeated = true
        }
        if let chunked = codings.firstIndex(of: "chunked"), chunked != codings.count - 1 {
            return .failure(FramingError("Transfer-Encoding applies \(codings[chunked + 1]) after chunked"))
        }
        var normalized = head
        if repeated {
            let first = head.headers.firstIndex { $0.hasName("transfer-encoding") }!
            let name = head.headers[first].name
            normalized.headers.removeAll { $0.hasName("transfer-encoding") }
            // Where the first one was: no Transfer-Encoding field comes before it.
            normalized.headers.insert(HTTPHeaderField(name, codings.joined(separator: ", ")), at: first)
        }
        if !codings.isEmpty {
            if codings.last != "chunked" && !lengths.isEmpty {
                // The body then ends with the connection (§6.3 item 4), while curl would stop at
                // the length: the two readings disagree, so neither is passed on.
                return .failure(FramingError("Content-Length beside a Transfer-Encoding that does not end in chunked"))
            }
            normalized.headers.removeAll { $0.hasName("content-length") }
        } else if let first = lengths.first, lengths.count > 1 {
            var merged = false
            normalized.headers = normalized.headers.compactMap { field in
                guard field.hasName("content-length") else { return field }
                defer { merged = true }
                return merged ? nil : HTTPHeaderField(field.name, String(first))
            }
        }
        return .success(normalized)
    }
}

/// Why an origin's response cannot be passed on.
package struct FramingError: Error, Sendable, Equatable, CustomStringConvertible {
    package var message: String

    package init(_ message: String) {
        self.message = message
    }

    package var description: String { self.message }
}
