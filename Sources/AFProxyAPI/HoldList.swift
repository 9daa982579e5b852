import AFProxyRules

/// `GET /v1/holds`: the rules in force, in order (`GET /v1/rules/holds` has the same rules as a
/// `RuleList`; this envelope stays for the clients and `afproxyctl hold` that read it).
package struct HoldList: Sendable, Codable, Equatable {
    package var holds: [HoldRule]

    package init(holds: [HoldRule]) {
        self.holds = holds
    }
}
