import AFProxyControl
import Testing

@Suite struct ControlRouteTests {
    private func route(_ method: String, _ target: String) -> ControlRoute? {
        try? ControlRoute.parse(method: method, target: target).get()
    }

    private func status(_ method: String, _ target: String) -> Int? {
        if case .failure(let refusal) = ControlRoute.parse(method: method, target: target) { return refusal.status }
        return nil
    }

    @Test func routesEveryEndpoint() {
        #expect(self.route("GET", "/v1/tasks") == .listTasks(includeHistory: false))
        #expect(self.route("GET", "/v1/tasks?all=1") == .listTasks(includeHistory: true))
        #expect(self.route("GET", "/v1/tasks/42") == .task(42))
        #expect(self.route("POST", "/v1/tasks/42/suspend") == .verb(.suspend, 42))
        #expect(self.route("POST", "/v1/tasks/42/resume") == .verb(.resume, 42))
        #expect(self.route("POST", "/v1/tasks/42/cancel") == .verb(.cancel, 42))
        #expect(self.route("POST", "/v1/tasks/suspend?all=1") == .verbAll(.suspend))
        #expect(self.route("POST", "/v1/tasks/resume?all=1") == .verbAll(.resume))
        #expect(self.route("GET", "/v1/events") == .events)
        #expect(self.route("GET", "/v1/live") == .live)
        #expect(self.route("GET", "/v1/stats") == .stats)
        #expect(self.route("GET", "/v1/status") == .status)
    }

    @Test func refusesWithThePreciseStatus() {
        #expect(self.status("GET", "/v2/tasks") == 404)
        #expect(self.status("GET", "/v1/nothing") == 404)
        #expect(self.status("GET", "/v1/tasks/abc") == 400)
        #expect(self.status("GET", "/v1/tasks/-3") == 400)
        #expect(self.status("DELETE", "/v1/tasks/3") == 405)
        #expect(self.status("POST", "/v1/tasks") == 405)
        #expect(self.status("POST", "/v1/tasks/3/explode") == 404)
        #expect(self.status("POST", "/v1/tasks/suspend") == 400)
        #expect(self.status("POST", "/v1/tasks/cancel?all=1") == 400)
        #expect(self.status("POST", "/v1/status") == 405)
        #expect(self.status("GET", "/v1/status/network") == 404)
    }
}

@Suite struct ControlRouteHARTests {
    private func route(_ target: String) -> Result<ControlRoute, ControlRoute.Refusal> {
        ControlRoute.parse(method: "GET", target: target)
    }

    @Test func routesHAR() throws {
        #expect(try self.route("/v1/har").get() == .har(includeHistory: false, ids: []))
        #expect(try self.route("/v1/har?all=1").get() == .har(includeHistory: true, ids: []))
        #expect(try self.route("/v1/har?id=3&id=5,7").get() == .har(includeHistory: false, ids: [3, 5, 7]))
    }

    @Test func refusesBadHARRequests() {
        #expect(throws: ControlRoute.Refusal.self) { try self.route("/v1/har?id=x").get() }
        #expect(throws: ControlRoute.Refusal.self) { try self.route("/v1/har/1").get() }
        #expect(throws: ControlRoute.Refusal.self) { try ControlRoute.parse(method: "POST", target: "/v1/har").get() }
    }
}
