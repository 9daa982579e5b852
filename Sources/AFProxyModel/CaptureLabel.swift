/// Which capture (`afproxyctl run`) a task's connection came from: the daemon's number for it,
/// unique while it runs, and the name it was given (`--name`, else the command's).
package struct CaptureLabel: Sendable, Codable, Equatable {
    package var id: Int
    package var name: String

    package init(id: Int, name: String) {
        self.id = id
        self.name = name
    }
}
