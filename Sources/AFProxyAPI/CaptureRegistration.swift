/// What `afproxyctl run` tells the daemon over the capture socket, in the message that carries
/// the capture's sockets (`DescriptorPassing`), and what the daemon answers. The connection
/// stays open while the command runs: its end is the capture's end.
package struct CaptureRegistration: Sendable, Codable, Equatable {
    /// `--name`, else the command's file name.
    package var name: String
    package var commandLine: String
    package var executable: String?
    /// The command's process id (as the daemon sees it: afproxyctl's namespace of pids).
    package var pid: Int
    package var uid: Int
    /// `--intercept`: the capture's TLS connections are intercepted, whatever the rules say.
    package var intercept: Bool
    /// A service's capture (`afproxyctl capture SERVICE`): the unit whose namespace it is. The
    /// process that registers is then the one keeping the namespace, not the client: `pid` and
    /// `uid` are its, and tasks name the unit instead.
    package var unit: String?

    package init(
        name: String, commandLine: String, executable: String?, pid: Int, uid: Int, intercept: Bool,
        unit: String? = nil
    ) {
        self.name = name
        self.commandLine = commandLine
        self.executable = executable
        self.pid = pid
        self.uid = uid
        self.intercept = intercept
        self.unit = unit
    }

    /// The sockets the message carries, in this order: TCP on 127.0.0.1 and on ::1 (one port),
    /// UDP (DNS) on 127.0.0.1 and on ::1 (another).
    package static let descriptorCount = 4
    /// The largest message either side sends.
    package static let maxMessage = 16 << 10
}

/// The daemon's answer: the capture's id, or why it was refused.
package struct CaptureAnswer: Sendable, Codable, Equatable {
    package var id: Int?
    package var error: String?

    package init(id: Int? = nil, error: String? = nil) {
        self.id = id
        self.error = error
    }
}

/// Where the capture socket is: beside the control socket (`control.sock` → `capture.sock`),
/// or the control socket's path with `.capture` added when it has another name.
package enum CaptureSocketPath {
    package static func forControlSocket(_ path: String) -> String {
        if path == "control.sock" { return "capture.sock" }
        if path.hasSuffix("/control.sock") { return String(path.dropLast("control.sock".utf8.count)) + "capture.sock" }
        return path + ".capture"
    }
}
