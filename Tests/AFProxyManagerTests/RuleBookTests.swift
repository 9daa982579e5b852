import AFProxyModel
import AFProxyRules
import AFProxyTestSupport
import Foundation
import Testing

@testable import AFProxyManager

@Suite struct RuleBookTests {
    @Test func theConfigurationPutsEveryKindInForceAndAReloadReplacesThemAll() throws {
        var pins = PinSet()
        try pins.add("example.org sha256//\(String(repeating: "A", count: 43))=")
        let users = ProxyUsers(["alice": "$6$x"])
        let configured = ConfiguredRules(
            throttleDefaults: [ThrottleRule(scope: .global, down: try ByteRate(parsing: "1M"))],
            destinations: DestinationPolicy(denyHosts: [try HostPattern("ads.example")]),
            access: AccessRules(clients: AllowedClients([IPNetwork("10.0.0.0/8")!]), users: users), pins: pins)
        let book = RuleBook(configured: configured)
        #expect(book.throttle.rules.rules.count == 1)
        #expect(book.destinationPolicy == configured.destinations)
        #expect(book.access.ruleSet == configured.access)
        #expect(book.pins.ruleSet == pins)

        _ = book.throttle.set(.host(try HostPattern("a.example")), down: try ByteRate(parsing: "2M"), up: nil)
        book.apply(ConfiguredRules())
        #expect(book.throttle.rules.rules.map(\.scope.description) == ["host a.example"])  // runtime rules stay
        #expect(book.destinationPolicy == .open)
        #expect(book.access.ruleSet == AccessRules())
        #expect(book.pins.ruleSet == PinSet())
    }

    @Test func holdRulesKeptByAPreviousRunAreBackWhenTheBookIsMade() throws {
        let scratch = TemporaryDirectory("rulebook")
        let directory = scratch.path
        let first = RuleBook(stateDirectory: directory)
        #expect(first.holds.ruleSet.count == 0)
        _ = first.holds.add(HoldConditions(host: try HostPattern("example.org")), once: false)
        for file in first.stateFiles { file.flush() }

        let second = RuleBook(stateDirectory: directory)
        #expect(second.holds.ruleSet.count == 1)
        #expect(second.holds.all.map(\.conditions) == first.holds.all.map(\.conditions))
        #expect(second.holds.isActive)
    }
}
