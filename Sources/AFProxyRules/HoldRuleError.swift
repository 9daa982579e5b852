/// Why a hold rule cannot be added as asked (a bad pattern, an unknown kind, no condition), or
/// why one cannot be removed: the control API answers it with 400 (404 for an unknown rule).
package struct HoldRuleError: Error, Sendable, Equatable, CustomStringConvertible {
    package var message: String
    package init(_ message: String) { self.message = message }
    package var description: String { self.message }
}
