import FoundationEssentials

/// One continuation of a broken-off response at the offset reached (`didResumeAtOffset`).
package struct TaskResume: Sendable, Codable, Equatable {
    package var offset: Int64
    package var at: Date

    package init(offset: Int64, at: Date) {
        self.offset = offset
        self.at = at
    }
}
