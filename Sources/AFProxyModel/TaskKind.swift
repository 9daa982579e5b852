/// What a task carries, borrowed from NSURLSession's task classes: a request without a body is a
/// `data` task, one with a body an `upload` task, a `CONNECT` tunnel a `stream` task and a managed
/// download to a file a `download` task.
package enum TaskKind: String, Sendable, Codable, CaseIterable {
    case data
    case upload
    case stream
    case download
}
