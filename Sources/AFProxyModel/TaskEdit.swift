/// One change a person made to a held task before it went on (`afproxyctl edit`, `respond`), as
/// its record lists it (`edits`), in words: what the origin got, or the client, differs from what
/// was asked by exactly these.
package struct TaskEdit: Sendable, Codable, Equatable {
    /// The request (before it went upstream) or the response (before it reached the client).
    package var side: BodySide
    /// "set header X-A: 1", "removed header Cookie", "method GET → PUT", "body replaced (12 bytes)",
    /// "answered by afproxy: 503"; a credential's value is never in it.
    package var change: String

    package init(_ side: BodySide, _ change: String) {
        self.side = side
        self.change = change
    }
}
