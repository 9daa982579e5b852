import AFProxyAPI
import Testing

@testable import AFProxyCLI

/// `afproxyctl capture SERVICE` without systemd: which names it takes, the drop-in it writes,
/// which directories --list counts, and how a service's tasks are named and filtered.
@Suite struct ServiceCaptureTests {
    @Test func aServiceIsNamedWithOrWithoutItsSuffix() throws {
        #expect(try ServiceCapture(service: "nginx").instance == "nginx")
        #expect(try ServiceCapture(service: "nginx.service").instance == "nginx")
        #expect(try ServiceCapture(service: "my-app_2:x.y.service").service == "my-app_2:x.y.service")
        let capture = try ServiceCapture(service: "nginx")
        #expect(capture.holdUnit == "afproxy-capture@nginx.service")
        #expect(capture.namespacePath() == "/run/netns/afproxy-nginx")
        #expect(
            capture.dropInPath(in: "/etc/systemd/system") == "/etc/systemd/system/nginx.service.d/afproxy-capture.conf")
    }

    @Test func namesSystemdCouldNotTakeAreRefusedWithTheReason() {
        func refusal(_ name: String) -> String? {
            do {
                _ = try ServiceCapture(service: name)
                return nil
            } catch {
                return error.description
            }
        }
        #expect(refusal("")?.contains("name the service") == true)
        #expect(refusal(".service")?.contains("name the service") == true)
        #expect(refusal("getty@tty1.service")?.contains("instance of a template") == true)
        #expect(refusal("a b")?.contains("not a service's name") == true)
        #expect(refusal("../etc")?.contains("not a service's name") == true)
        #expect(refusal("-x")?.contains("not a service's name") == true)
        #expect(refusal("naïve")?.contains("not a service's name") == true)
        #expect(refusal(String(repeating: "a", count: ServiceCapture.maxInstance + 1))?.contains("at most") == true)
        #expect(refusal(String(repeating: "a", count: ServiceCapture.maxInstance)) == nil)
        // Its connections would come back to it.
        #expect(refusal("afproxy")?.contains("cannot be captured") == true)
        #expect(refusal("afproxy.service")?.contains("cannot be captured") == true)
    }

    @Test func theDropInRequiresTheHoldAndJoinsItsNamespace() throws {
        let text = try ServiceCapture(service: "api.service").dropIn
        let lines = text.split(separator: "\n").filter { !$0.hasPrefix("#") }
        #expect(
            lines == [
                "[Unit]", "Requires=afproxy-capture@api.service", "After=afproxy-capture@api.service", "[Service]",
                "NetworkNamespacePath=/run/netns/afproxy-api",
            ])
        #expect(text.contains("afproxyctl capture --remove api.service"))
    }

    @Test func theListCountsOnlyDirectoriesWithOurDropIn() {
        let entries = ["zeta.service.d", "alpha.service.d", "other.service.d", "sockets.target.wants", "b.service"]
        let captured = ServiceCapture.captured(in: entries) { $0 != "other.service.d" }
        #expect(captured.map(\.service) == ["alpha.service", "zeta.service"])
    }

    @Test func aServiceCaptureIsNamedByItsUnitAndFilteredWithOrWithoutTheSuffix() {
        let client = ClientProcess(unit: "api.service", capture: CaptureLabel(id: 2, name: "api.service"))
        #expect(client.label == "api.service")
        #expect(ProcessFilter(capture: "api").matches(client))
        #expect(ProcessFilter(capture: "api.service").matches(client))
        #expect(!ProcessFilter(capture: "ap").matches(client))
        #expect(ProcessFilter(unit: "api").matches(client))
        #expect(!ProcessFilter(unit: "api.socket").matches(client))
        let lines = TaskDetail.processLines(client)
        #expect(lines.contains("  capture    api.service (afproxyctl capture, #2)"))
        let run = ClientProcess(pid: 9, capture: CaptureLabel(id: 3, name: "api"))
        #expect(TaskDetail.processLines(run).contains("  capture    api (afproxyctl run, #3)"))
    }
}
