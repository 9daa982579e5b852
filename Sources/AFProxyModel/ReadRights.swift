/// Whose rights a file is read with when afproxy serves it for someone (a map-local rule's files,
/// read by the daemon's user on behalf of whoever added the rule). Without it, a member of the
/// control socket's group or a holder of the dashboard token could have the daemon serve what only
/// the daemon's user may read: the interception CA's key, the token file, the state directory.
///
/// The check is the kernel's permission bits as they would apply to that caller (owner, then
/// group, then other; root reads anything). ACLs are not consulted: with ACLs a file's group bits
/// are the ACL mask, so reading them as the group's can only refuse more than the kernel would.
package enum ReadRights: Sendable, Equatable, Hashable {
    /// Root, or the daemon's own user: what the daemon can read, it may serve.
    case daemon
    /// A local user, by the uid and every group it had when it asked.
    case user(uid: UInt32, groups: [UInt32])
    /// No one in particular (the dashboard's token): only what every user may read.
    case anyone

    /// What a caller wants of one path component.
    package enum Access: Sendable {
        /// Read a file (`r`).
        case read
        /// Pass through a directory (`x`).
        case search
    }

    /// Whether these rights allow `access` on an inode of `mode` owned by `owner`:`group`.
    package func allow(_ access: Access, mode: UInt32, owner: UInt32, group: UInt32) -> Bool {
        let bit: UInt32 = access == .read ? 0o4 : 0o1
        switch self {
        case .daemon:
            return true
        case .user(let uid, _) where uid == 0:
            return true
        case .user(let uid, let groups):
            if uid == owner { return mode & (bit << 6) != 0 }
            if groups.contains(group) { return mode & (bit << 3) != 0 }
            return mode & bit != 0
        case .anyone:
            return mode & bit != 0
        }
    }

    /// Paths the rights of `.user` and `.anyone` never reach whatever their bits say: the kernel's
    /// views, whose files (`/proc/self/environ`, `/proc/self/maps`) answer by who the *reader* is,
    /// and the reader here is the daemon.
    package static let kernelViews = ["/proc", "/sys"]

    /// For a person: `the daemon's user`, `uid 1000`, `anyone`.
    package var description: String {
        switch self {
        case .daemon: "the daemon's user"
        case .user(let uid, _): "uid \(uid)"
        case .anyone: "anyone"
        }
    }
}

/// Kept in a rule's JSON as `"daemon"`, `"anyone"` or `{"uid": 1000, "groups": [1000, 27]}`.
extension ReadRights: Codable {
    private struct User: Codable {
        var uid: UInt32
        var groups: [UInt32]
    }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let user = try? container.decode(User.self) {
            self = .user(uid: user.uid, groups: user.groups)
            return
        }
        switch try container.decode(String.self) {
        case "daemon": self = .daemon
        case "anyone": self = .anyone
        case let other:
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "readAs must be daemon, anyone or {uid, groups}, not \(other)")
        }
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .daemon: try container.encode("daemon")
        case .anyone: try container.encode("anyone")
        case .user(let uid, let groups): try container.encode(User(uid: uid, groups: groups))
        }
    }
}
