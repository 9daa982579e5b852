import AFProxyAPI
import AFProxyModel
import AFProxyRules
import Testing

@testable import AFProxyCLI

@Suite struct HoldCommandTests {
    @Test func theTableShowsEachRuleInOrder() throws {
        let rules = [
            HoldRule(
                id: 1,
                conditions: try HoldConditions(host: "*.example.org", method: "POST", url: nil, kind: nil, all: false),
                caught: 3),
            HoldRule(id: 4, conditions: HoldConditions(all: true), once: true, response: true),
        ]
        #expect(
            HoldTable(rules: rules).render() == """
                ID  CONDITIONS                      AT        ONCE  CAUGHT
                1   host=*.example.org method=POST  request   no    3
                4   all                             response  yes   0
                """)
        #expect(HoldTable(rules: []).render() == "no hold rules")
    }

    @Test func addChecksItsConditionsBeforeAskingTheDaemon() throws {
        #expect(throws: (any Error).self) { try AFProxyCtl.parseAsRoot(["hold", "add"]) }
        #expect(throws: (any Error).self) { try AFProxyCtl.parseAsRoot(["hold", "add", "--url", "("]) }
        #expect(throws: (any Error).self) { try AFProxyCtl.parseAsRoot(["hold", "add", "--kind", "x"]) }
        #expect(throws: (any Error).self) { try AFProxyCtl.parseAsRoot(["hold", "rm", "0"]) }
        let add = try AFProxyCtl.parseAsRoot(["hold", "add", "--host", "a.org", "--once"]) as? HoldAddCommand
        #expect(add?.body == HoldRequestBody(host: "a.org", once: true))
    }

    @Test func aHeldTaskSaysSoInTheListAndInShow() {
        var task = TaskRecord(
            id: 5, kind: .data, state: .suspended, method: "GET", url: "http://a.org/", client: "c",
            createdAt: .init(timeIntervalSince1970: 0))
        task.heldBy = 2
        let table = TaskTable(tasks: rows([task]), terminal: false, now: .init(timeIntervalSince1970: 1)).render()
        #expect(table.contains("held by rule 2"))
        #expect(TaskDetail(task: task, terminal: false).render().contains("held       by rule 2"))
    }
}
