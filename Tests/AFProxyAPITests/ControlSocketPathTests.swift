import AFProxyAPI
import Testing

/// The daemon and afproxyctl find the control socket by the same rule.
@Suite struct ControlSocketPathTests {
    @Test func controlSocketPathFollowsItsOrderOfSources() {
        let uid: UInt32 = 1000
        #expect(
            ControlSocketPath.resolve(flag: "/f.sock", environment: ["AFPROXY_CONTROL_SOCKET": "/e"], uid: uid)
                == "/f.sock")
        #expect(
            ControlSocketPath.resolve(
                flag: nil, environment: ["AFPROXY_CONTROL_SOCKET": "/e", "RUNTIME_DIRECTORY": "/r"], uid: uid) == "/e")
        #expect(
            ControlSocketPath.resolve(
                flag: nil, environment: ["RUNTIME_DIRECTORY": "/run/afproxy", "XDG_RUNTIME_DIR": "/x"], uid: uid)
                == "/run/afproxy/control.sock")
        #expect(
            ControlSocketPath.resolve(flag: nil, environment: ["XDG_RUNTIME_DIR": "/run/user/1000"], uid: uid)
                == "/run/user/1000/afproxy/control.sock")
        #expect(ControlSocketPath.resolve(flag: nil, environment: [:], uid: uid) == "/tmp/afproxy-1000/control.sock")
    }

    @Test func afproxyctlFallsBackToTheSystemServiceSocket() {
        let system = ControlSocketPath.systemService
        let user = "/tmp/afproxy-0/control.sock"
        func resolve(_ flag: String?, _ environment: [String: String], existing: Set<String>) -> String {
            ControlSocketPath.resolveForClient(flag: flag, environment: environment, uid: 0) { existing.contains($0) }
        }
        // Nothing at the per-user default, the system service's socket there: that one.
        #expect(resolve(nil, [:], existing: [system]) == system)
        // A daemon of the user's own wins; so does a path anyone named, even a missing one.
        #expect(resolve(nil, [:], existing: [system, user]) == user)
        #expect(resolve("/f.sock", [:], existing: [system]) == "/f.sock")
        #expect(resolve(nil, ["AFPROXY_CONTROL_SOCKET": "/e"], existing: [system]) == "/e")
        // Neither there: the per-user default, so the error names where a daemon was expected.
        #expect(resolve(nil, [:], existing: []) == user)
    }
}
