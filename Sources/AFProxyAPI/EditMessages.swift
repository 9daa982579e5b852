/// `PATCH /v1/tasks/{id}/request`: what to change in a held request. Every part optional;
/// `setHeaders` as `Name: value` lines, `body` base64 (the whole new body).
package struct RequestEditBody: Sendable, Codable, Equatable {
    package var method: String?
    /// The path and query (`/v1/items?page=2`).
    package var path: String?
    package var setHeaders: [String]?
    package var removeHeaders: [String]?
    package var body: String?

    package init(
        method: String? = nil, path: String? = nil, setHeaders: [String]? = nil, removeHeaders: [String]? = nil,
        body: String? = nil
    ) {
        self.method = method
        self.path = path
        self.setHeaders = setHeaders
        self.removeHeaders = removeHeaders
        self.body = body
    }
}

/// `POST /v1/tasks/{id}/respond`: the answer afproxy gives a held request in the origin's place.
/// `headers` as `Name: value` lines, `body` base64.
package struct RespondBody: Sendable, Codable, Equatable {
    package var status: Int
    package var headers: [String]?
    package var body: String?

    package init(status: Int, headers: [String]? = nil, body: String? = nil) {
        self.status = status
        self.headers = headers
        self.body = body
    }
}

/// `PATCH /v1/tasks/{id}/response`: what to change in a response held at its head. Every part
/// optional; a `body` (base64) makes the edited head and that body the answer in the origin's place.
package struct ResponseEditBody: Sendable, Codable, Equatable {
    package var status: Int?
    package var setHeaders: [String]?
    package var removeHeaders: [String]?
    package var body: String?

    package init(status: Int? = nil, setHeaders: [String]? = nil, removeHeaders: [String]? = nil, body: String? = nil) {
        self.status = status
        self.setHeaders = setHeaders
        self.removeHeaders = removeHeaders
        self.body = body
    }
}
