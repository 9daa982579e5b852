/// What a person changes in a held request before it goes upstream (`afproxyctl edit`,
/// `PATCH /v1/tasks/{id}/request`): each part optional, applied in one step by `applied(to:)`,
/// which refuses what the proxy could not send as asked and lists what changed (`TaskEdit`).
package struct RequestEdit: Sendable, Equatable {
    package var method: String?
    /// The path and query (`/v1/items?page=2`): the scheme and host stay the request's.
    package var target: String?
    /// Fields to set: each replaces every field of that name, or is added.
    package var setHeaders: HTTPHeaderList
    /// Fields to remove, by name (any case).
    package var removeHeaders: [String]
    /// The new request body, whole; nil keeps the client's.
    package var body: [UInt8]?

    package init(
        method: String? = nil, target: String? = nil, setHeaders: HTTPHeaderList = [], removeHeaders: [String] = [],
        body: [UInt8]? = nil
    ) {
        self.method = method
        self.target = target
        self.setHeaders = setHeaders
        self.removeHeaders = removeHeaders
        self.body = body
    }

    package var isEmpty: Bool {
        self.method == nil && self.target == nil && self.setHeaders.isEmpty && self.removeHeaders.isEmpty
            && self.body == nil
    }

    /// Why an edit cannot be applied, for a person.
    package struct Refusal: Error, Sendable, Equatable, CustomStringConvertible {
        package var message: String
        package var description: String { self.message }

        package init(message: String) {
            self.message = message
        }
    }

    /// Fields the proxy writes itself from the request's URL and body (the host, the framing) or
    /// that belong to one connection: an edit that set or removed them would be undone or would
    /// break the exchange.
    package static let fixedFields: Set<String> = [
        "host", "content-length", "transfer-encoding", "expect", "connection", "keep-alive", "te", "trailer",
        "upgrade", "proxy-connection",
    ]

    /// `request` with this edit, and what changed; refuses the whole edit when one part is wrong.
    package func applied(to request: ProxyRequest) throws(Refusal) -> (ProxyRequest, [TaskEdit]) {
        var edited = request
        var changes: [TaskEdit] = []
        if let method = self.method, method != request.method {
            guard Self.isToken(method), method.utf8.count <= 32 else {
                throw Refusal(message: "the method \(method) is not an HTTP method (a token of at most 32 characters)")
            }
            guard method != "CONNECT" else { throw Refusal(message: "a request cannot be made a CONNECT") }
            guard (method == "HEAD") == request.isHead else {
                // The client is answered as its own method frames the response: a HEAD's answer has no body.
                throw Refusal(
                    message:
                        "a HEAD stays a HEAD and another method cannot become one: the client reads the answer as its own method frames it"
                )
            }
            edited.method = method
            changes.append(TaskEdit(.request, "method \(request.method) → \(method)"))
        }
        if let target = self.target {
            guard target.first == "/", target.utf8.count <= 8192,
                !target.utf8.contains(where: { $0 <= 0x20 || $0 == 0x7F || $0 == UInt8(ascii: "#") })
            else {
                throw Refusal(
                    message:
                        "the path \(target) is not a path and query (it starts with /, and holds no space, control character or #)"
                )
            }
            let url = Self.origin(of: request.url) + target
            if url != request.url {
                changes.append(TaskEdit(.request, "path \(Self.target(of: request.url)) → \(target)"))
                edited.url = url
            }
        }
        changes += try Self.editFields(
            &edited.headers, set: self.setHeaders, remove: self.removeHeaders, side: .request)
        if let body = self.body {
            edited.body = body.isEmpty ? .none : .length(Int64(body.count))
            changes.append(TaskEdit(.request, "body replaced (\(body.count) bytes)"))
        }
        return (edited, changes)
    }

    /// Removes the fields named in `remove`, then sets those in `set` (each replacing every field
    /// of its name, or added): the field part of a request's and a response's edit, listed as
    /// changes of `side`.
    package static func editFields(
        _ headers: inout HTTPHeaderList, set: HTTPHeaderList, remove: [String], side: BodySide
    ) throws(Refusal) -> [TaskEdit] {
        var changes: [TaskEdit] = []
        for name in remove {
            let lower = name.lowercased()
            guard !Self.fixedFields.contains(lower) else { throw Self.fixed(name) }
            guard headers.contains(where: { $0.hasName(lower) }) else { continue }
            headers.removeAll { $0.hasName(lower) }
            changes.append(TaskEdit(side, "removed header \(name)"))
        }
        for field in set {
            guard field.isWellFormed else {
                throw Refusal(
                    message:
                        "the header \(field.name) is not a field (a token name, a value without control characters)")
            }
            let lower = field.name.lowercased()
            guard !Self.fixedFields.contains(lower) else { throw Self.fixed(field.name) }
            if let index = headers.firstIndex(where: { $0.hasName(lower) }) {
                headers[index] = field
                headers.removeAll { $0.hasName(lower) && $0 != field }
            } else {
                headers.append(field)
            }
            changes.append(TaskEdit(side, "set header \(field.name): \(field.isSecret ? "<redacted>" : field.value)"))
        }
        return changes
    }

    private static func fixed(_ name: String) -> Refusal {
        Refusal(
            message:
                "\(name) is written by the proxy (the host follows the URL, the framing the body, the connection is the client's): it cannot be edited"
        )
    }

    /// `scheme://authority` of an absolute URL.
    private static func origin(of url: String) -> String {
        guard let colon = url.firstIndex(of: ":"), url[colon...].hasPrefix("://") else { return url }
        let rest = url[url.index(colon, offsetBy: 3)...]
        let end = rest.firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex
        return String(url[..<end])
    }

    private static func target(of url: String) -> String {
        let rest = url.dropFirst(Self.origin(of: url).count)
        return rest.isEmpty ? "/" : String(rest)
    }

    private static func isToken(_ text: String) -> Bool {
        HTTPHeaderField(text, "").isWellFormed
    }
}
