import AFProxyModel

/// What the tasks must do when the network or `network-loss` changes: one decision for the
/// network going and coming back under a policy, and for a reload (SIGHUP) that swaps the policy
/// while the network is gone — so that a reload leaves the tasks exactly as if the new policy had
/// been in force when the network went away.
package struct NetworkLossChange: Sendable, Equatable {
    /// Download tasks stop their attempt and wait (`waiting for network`).
    package var holdDownloads = false
    /// Download tasks that wait for the network continue.
    package var releaseDownloads = false
    /// Running proxied tasks to non-local destinations are suspended.
    package var suspendProxied = false
    /// The proxied tasks the network suspended are resumed.
    package var resumeProxied = false

    package init(
        holdDownloads: Bool = false, releaseDownloads: Bool = false, suspendProxied: Bool = false,
        resumeProxied: Bool = false
    ) {
        self.holdDownloads = holdDownloads
        self.releaseDownloads = releaseDownloads
        self.suspendProxied = suspendProxied
        self.resumeProxied = resumeProxied
    }

    package static let none = NetworkLossChange()

    /// The network went away under `policy`.
    package static func lost(under policy: NetworkLossPolicy) -> NetworkLossChange {
        NetworkLossChange(holdDownloads: policy != .ignore, suspendProxied: policy == .suspendAll)
    }

    /// The network came back under `policy`.
    package static func restored(under policy: NetworkLossPolicy) -> NetworkLossChange {
        NetworkLossChange(releaseDownloads: policy != .ignore, resumeProxied: policy == .suspendAll)
    }

    /// `network-loss` changes from `old` to `new` (a reload); nothing to do while the network is
    /// there, since the new policy simply applies at the next loss.
    package static func policy(
        from old: NetworkLossPolicy, to new: NetworkLossPolicy, networkDown: Bool
    ) -> NetworkLossChange {
        guard networkDown, old != new else { return .none }
        return NetworkLossChange(
            holdDownloads: old == .ignore, releaseDownloads: new == .ignore,
            suspendProxied: new == .suspendAll, resumeProxied: old == .suspendAll)
    }
}
