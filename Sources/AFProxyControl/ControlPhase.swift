import AFProxyServerKit

/// The control handlers' name for the kit's `ConnectionPhase`, which they send to the timeout
/// handler at the head of a control connection.
package typealias ControlPhase = ConnectionPhase
