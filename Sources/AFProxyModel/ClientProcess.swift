/// The program on this machine that opened a client connection, as far as the daemon may see it:
/// found from the connection's socket (its owner's uid, then the process holding it). Every field
/// but `uid` may be unknown: a process the daemon may not look into (another user's, under the
/// system service's hardening) still tells whose socket it was.
package struct ClientProcess: Sendable, Codable, Equatable {
    package var pid: Int?
    /// `/proc/PID/exe`, symlinks resolved by the kernel.
    package var executable: String?
    /// The arguments joined by spaces, shortened to `commandLineLimit` characters.
    package var commandLine: String?
    /// The user name of `uid`, when the system knows one.
    package var user: String?
    /// The process's effective uid, or the socket owner's when the process is not known.
    package var uid: Int?
    /// The systemd unit the process runs in (`sd_pid_get_unit`): `foo.service`, `session-2.scope`.
    package var unit: String?
    /// The capture the process runs in (`afproxyctl run`): its connections reached afproxy
    /// without any proxy setting of the program's.
    package var capture: CaptureLabel?

    package init(
        pid: Int? = nil, executable: String? = nil, commandLine: String? = nil, user: String? = nil,
        uid: Int? = nil, unit: String? = nil, capture: CaptureLabel? = nil
    ) {
        self.pid = pid
        self.executable = executable
        self.commandLine = commandLine
        self.user = user
        self.uid = uid
        self.unit = unit
        self.capture = capture
    }

    // Encode nil as null, as the task record does: every documented key is there.
    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(self.pid, forKey: .pid)
        try container.encode(self.executable, forKey: .executable)
        try container.encode(self.commandLine, forKey: .commandLine)
        try container.encode(self.user, forKey: .user)
        try container.encode(self.uid, forKey: .uid)
        try container.encode(self.unit, forKey: .unit)
        try container.encode(self.capture, forKey: .capture)
    }

    /// Characters of the command line kept: enough to tell one invocation from another in
    /// `show`, short enough that a long argument list does not fill every record.
    package static let commandLineLimit = 120

    /// What `--process NAME` matches and the table shows: the executable's file name, else the
    /// command line's first word's.
    package var name: String? {
        if let executable, let base = Self.baseName(executable) { return base }
        if let first = self.commandLine?.split(separator: " ").first { return Self.baseName(String(first)) }
        return nil
    }

    /// `curl[1234]`, `curl`, `[1234]`, or the user (`alice`) when nothing more is known, or the
    /// unit (a captured service's connections: its processes are in a namespace of their own).
    package var label: String {
        switch (self.name, self.pid) {
        case (let name?, let pid?): "\(name)[\(pid)]"
        case (let name?, nil): name
        case (nil, let pid?): "[\(pid)]"
        case (nil, nil): self.user ?? self.uid.map { "uid \($0)" } ?? self.unit ?? "?"
        }
    }

    private static func baseName(_ path: String) -> String? {
        // A replaced executable reads "/usr/bin/foo (deleted)".
        let path = path.hasSuffix(" (deleted)") ? String(path.dropLast(10)) : path
        let base = path.split(separator: "/").last.map(String.init) ?? ""
        return base.isEmpty ? nil : base
    }

    /// `/proc/PID/cmdline` (arguments each ended by NUL) as one line: credentials taken out
    /// (`CommandLineRedaction`), arguments joined by a space, control characters as `?`, invalid
    /// UTF-8 repaired, cut to `limit` characters with an ellipsis. Nil for an empty one (a kernel
    /// thread, a zombie).
    package static func commandLine(fromProc bytes: [UInt8], limit: Int = commandLineLimit) -> String? {
        var bytes = bytes[...]
        while bytes.last == 0 { bytes.removeLast() }
        guard !bytes.isEmpty else { return nil }
        let arguments = bytes.split(separator: 0, omittingEmptySubsequences: false).map { argument in
            String(
                decoding: argument.map { byte -> UInt8 in
                    (0x01..<0x20).contains(byte) || byte == 0x7F ? UInt8(ascii: "?") : byte
                }, as: UTF8.self)
        }
        return Self.commandLine(arguments: arguments, limit: limit)
    }

    /// Arguments as one line, credentials taken out, cut to `limit` characters with an ellipsis.
    package static func commandLine(arguments: [String], limit: Int = commandLineLimit) -> String {
        let text = CommandLineRedaction.redact(arguments).joined(separator: " ")
        guard text.count > limit else { return text }
        return String(text.prefix(max(0, limit - 1))) + "…"
    }
}
