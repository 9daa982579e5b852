/// The rules of every kind the configuration gives, read at start and on each reload and handed
/// to the rule book as one value, so that a reload has one path whatever the kind. A reload
/// replaces them all; the rules set at runtime stay.
package struct ConfiguredRules: Sendable, Equatable {
    /// `throttle-global`, `throttle-host`: the throttle's defaults.
    package var throttleDefaults: [ThrottleRule]
    /// `deny-hosts`, `allow-hosts`, `deny-private-destinations`.
    package var destinations: DestinationPolicy
    /// `allow-clients`, `proxy-auth-file`.
    package var access: AccessRules
    /// `pin`.
    package var pins: PinSet
    /// `tls-ca-file`.
    package var security: SecurityPolicy
    /// `upstream-proxy`, `upstream-exclude`: the upstream proxy's route.
    package var upstream: UpstreamProxyRoute
    /// `intercept-hosts`, `intercept-exclude`, `intercept-auto-passthrough`,
    /// `intercept-passthrough-time`: the configured part of the intercept rules.
    package var intercept: InterceptRuleSet

    package init(
        throttleDefaults: [ThrottleRule] = [], destinations: DestinationPolicy = .open,
        access: AccessRules = AccessRules(), pins: PinSet = PinSet(), security: SecurityPolicy = SecurityPolicy(),
        upstream: UpstreamProxyRoute = UpstreamProxyRoute(), intercept: InterceptRuleSet = InterceptRuleSet()
    ) {
        self.intercept = intercept
        self.throttleDefaults = throttleDefaults
        self.destinations = destinations
        self.access = access
        self.pins = pins
        self.security = security
        self.upstream = upstream
    }
}
