import Testing

@testable import AFProxyControl

@Suite struct TasksEndpointTests {
    private func route(_ method: String, _ target: String) -> TasksEndpoint.Route? {
        ControlRouterFixture.route(method, target, to: TasksEndpoint.self)
    }

    private func status(_ method: String, _ target: String) -> Int? {
        ControlRouterFixture.refusal(method, target)?.status
    }

    @Test func routesEveryTaskRequest() {
        #expect(self.route("GET", "/v1/tasks") == .list(includeHistory: false))
        #expect(self.route("GET", "/v1/tasks?all=1") == .list(includeHistory: true))
        #expect(self.route("GET", "/v1/tasks/42") == .task(42))
        #expect(self.route("GET", "/v1/tasks/42/body") == .body(42, .response))
        #expect(self.route("GET", "/v1/tasks/42/body?side=request") == .body(42, .request))
        #expect(self.route("GET", "/v1/tasks/42/body?side=both") == nil)
        #expect(self.route("POST", "/v1/tasks/42/body") == nil)
        #expect(self.route("POST", "/v1/tasks/42/replay") == .replay(42))
        #expect(self.route("GET", "/v1/tasks/42/replay") == nil)
        #expect(self.route("PATCH", "/v1/tasks/42/request") == .edit(42))
        #expect(self.route("POST", "/v1/tasks/42/request") == nil)
        #expect(self.route("POST", "/v1/tasks/42/respond") == .respond(42))
        #expect(self.route("PATCH", "/v1/tasks/42/respond") == nil)
        #expect(self.route("POST", "/v1/tasks/42/suspend") == .verb(.suspend, 42))
        #expect(self.route("POST", "/v1/tasks/42/resume") == .verb(.resume, 42))
        #expect(self.route("POST", "/v1/tasks/42/cancel") == .verb(.cancel, 42))
        #expect(self.route("POST", "/v1/tasks/suspend?all=1") == .verbAll(.suspend))
        #expect(self.route("POST", "/v1/tasks/resume?all=1") == .verbAll(.resume))
    }

    @Test func refusesWithThePreciseStatus() {
        #expect(self.status("GET", "/v1/tasks/abc") == 400)
        #expect(self.status("GET", "/v1/tasks/-3") == 400)
        #expect(self.status("DELETE", "/v1/tasks/3") == 405)
        #expect(self.status("POST", "/v1/tasks") == 405)
        #expect(self.status("POST", "/v1/tasks/3/explode") == 404)
        #expect(self.status("POST", "/v1/tasks/1/2/3") == 404)
        #expect(self.status("GET", "/v1/tasks/3/suspend") == 405)
        #expect(self.status("POST", "/v1/tasks/suspend") == 400)
        #expect(self.status("POST", "/v1/tasks/cancel?all=1") == 400)
    }

    @Test func refusesWithThePreciseMessage() {
        #expect(
            ControlRouterFixture.refusal("GET", "/v1/tasks/abc")?.message
                == "task id must be a positive integer, not abc")
        #expect(ControlRouterFixture.refusal("POST", "/v1/tasks") == .notAllowed("POST", on: "/v1/tasks"))
        #expect(
            ControlRouterFixture.refusal("POST", "/v1/tasks/3/explode")?.message
                == "unknown verb explode: use suspend, resume, cancel, replay or respond")
        #expect(
            ControlRouterFixture.refusal("POST", "/v1/tasks/suspend")?.message == "POST /v1/tasks/suspend needs ?all=1")
    }
}

@Suite struct HAREndpointTests {
    private func route(_ target: String) -> HAREndpoint.Route? {
        ControlRouterFixture.route("GET", target, to: HAREndpoint.self)
    }

    @Test func routesHAR() {
        #expect(self.route("/v1/har") == .har(includeHistory: false, ids: [], secrets: false))
        #expect(self.route("/v1/har?all=1") == .har(includeHistory: true, ids: [], secrets: false))
        #expect(self.route("/v1/har?id=3&id=5,7") == .har(includeHistory: false, ids: [3, 5, 7], secrets: false))
        #expect(self.route("/v1/har?all=1&secrets=1") == .har(includeHistory: true, ids: [], secrets: true))
    }

    @Test func refusesBadHARRequests() {
        #expect(ControlRouterFixture.refusal("GET", "/v1/har?id=x")?.status == 400)
        #expect(ControlRouterFixture.refusal("GET", "/v1/har/1")?.status == 404)
        #expect(ControlRouterFixture.refusal("POST", "/v1/har")?.status == 405)
    }
}
