import AFProxyManager
import AFProxyModel
import Testing

/// What the tasks do when the network goes or comes back, and when a reload changes
/// `network-loss` while it is gone (issue 22): the same place the new policy would have put them.
@Suite struct NetworkLossChangeTests {
    @Test func aLossAndARestoreUnderEachPolicy() {
        #expect(NetworkLossChange.lost(under: .ignore) == .none)
        #expect(NetworkLossChange.lost(under: .waitDownloads) == .init(holdDownloads: true))
        #expect(NetworkLossChange.lost(under: .suspendAll) == .init(holdDownloads: true, suspendProxied: true))
        #expect(NetworkLossChange.restored(under: .ignore) == .none)
        #expect(NetworkLossChange.restored(under: .waitDownloads) == .init(releaseDownloads: true))
        #expect(
            NetworkLossChange.restored(under: .suspendAll) == .init(releaseDownloads: true, resumeProxied: true))
    }

    @Test func aReloadWhileTheNetworkIsThereChangesNoTask() {
        for old in NetworkLossPolicy.allCases {
            for new in NetworkLossPolicy.allCases {
                #expect(NetworkLossChange.policy(from: old, to: new, networkDown: false) == .none)
            }
        }
    }

    @Test func aReloadWhileTheNetworkIsGoneActsAsIfTheNewPolicyHadBeenThere() {
        #expect(NetworkLossChange.policy(from: .waitDownloads, to: .waitDownloads, networkDown: true) == .none)
        #expect(
            NetworkLossChange.policy(from: .waitDownloads, to: .suspendAll, networkDown: true)
                == .init(suspendProxied: true))
        #expect(
            NetworkLossChange.policy(from: .suspendAll, to: .waitDownloads, networkDown: true)
                == .init(resumeProxied: true))
        #expect(
            NetworkLossChange.policy(from: .waitDownloads, to: .ignore, networkDown: true)
                == .init(releaseDownloads: true))
        #expect(
            NetworkLossChange.policy(from: .ignore, to: .waitDownloads, networkDown: true)
                == .init(holdDownloads: true))
        #expect(
            NetworkLossChange.policy(from: .ignore, to: .suspendAll, networkDown: true)
                == .init(holdDownloads: true, suspendProxied: true))
        #expect(
            NetworkLossChange.policy(from: .suspendAll, to: .ignore, networkDown: true)
                == .init(releaseDownloads: true, resumeProxied: true))
    }
}
