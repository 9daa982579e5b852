import AFProxyModel
import NIOCore

#if canImport(Glibc)
import Glibc
#endif

/// Who is on the other end of a Unix socket (SO_PEERCRED), and whether they may steer the daemon:
/// root, the daemon's own user, and members of the daemon's group.
package struct PeerCredentials: Sendable, Equatable {
    // Laid out as Linux's `struct ucred`, which Glibc's module does not export.
    package var pid: Int32 = 0
    package var uid: UInt32 = 0
    package var gid: UInt32 = 0

    /// SO_PEERCRED on Linux.
    private static let option: Int32 = 17

    /// SO_PEERCRED of a socket afproxy reads by hand (the capture socket); nil on failure.
    package static func of(descriptor: Int32) -> PeerCredentials? {
        var credentials = PeerCredentials()
        var length = socklen_t(MemoryLayout<PeerCredentials>.size)
        guard getsockopt(descriptor, SOL_SOCKET, Self.option, &credentials, &length) == 0 else { return nil }
        return credentials
    }

    static func of(_ channel: any Channel) -> EventLoopFuture<PeerCredentials> {
        guard let provider = channel as? any SocketOptionProvider else {
            return channel.eventLoop.makeFailedFuture(ChannelError.operationUnsupported)
        }
        return provider.unsafeGetSocketOption(level: SocketOptionLevel(SOL_SOCKET), name: SocketOptionName(Self.option))
    }

    package func isAllowed(daemonUID: uid_t = geteuid(), daemonGID: gid_t = getegid()) -> Bool {
        if self.uid == 0 || self.uid == daemonUID || self.gid == daemonGID { return true }
        return Self.groups(of: self.uid).contains(daemonGID)
    }

    /// The rights a file is read with for this caller: the daemon's when it is root or the
    /// daemon's user, else its uid with its group and every group the user database gives it
    /// (SO_PEERCRED carries no supplementary groups).
    package func readRights(daemonUID: uid_t = geteuid()) -> ReadRights {
        if self.uid == 0 || self.uid == daemonUID { return .daemon }
        var groups = Self.groups(of: self.uid)
        if !groups.contains(self.gid) { groups.insert(self.gid, at: 0) }
        return .user(uid: self.uid, groups: groups)
    }

    /// The user's groups from the user database (its primary first); none for a uid it lacks.
    private static func groups(of uid: uid_t) -> [gid_t] {
        guard let password = getpwuid(uid), let name = password.pointee.pw_name else { return [] }
        var groups = [gid_t](repeating: 0, count: 256)
        var count = Int32(groups.count)
        guard getgrouplist(name, password.pointee.pw_gid, &groups, &count) >= 0 else { return [] }
        return Array(groups.prefix(Int(count)))
    }
}
