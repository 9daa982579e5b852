/// What `GET /v1/status` says of recorded bodies while any record rule is in force or any body
/// is kept: bodies hold secrets, so their keeping is never silent.
package struct RecordingStatus: Sendable, Codable, Equatable {
    package var rules: Int
    package var bodies: Int
    package var bytes: Int64
    package var maxTotal: Int64

    package init(rules: Int, bodies: Int, bytes: Int64, maxTotal: Int64) {
        self.rules = rules
        self.bodies = bodies
        self.bytes = bytes
        self.maxTotal = maxTotal
    }
}
