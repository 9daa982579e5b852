/// The four states of a task, as NSURLSessionTask has them.
package enum TaskState: String, Sendable, Codable, CaseIterable {
    case running
    case suspended
    case canceling
    case completed
}
