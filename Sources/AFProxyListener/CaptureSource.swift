import AFProxyModel

/// One capture as the listener serves it (`ProxyListener.adoptCapture`): what its tasks carry,
/// whether its TLS is intercepted whatever the rules say, and the names its resolver answered.
package struct CaptureSource: Sendable {
    package var label: CaptureLabel
    /// The captured command: every task of the capture shows it as its client process.
    package var process: ClientProcess
    package var interceptAll: Bool
    package let names = CaptureNames()

    package init(label: CaptureLabel, process: ClientProcess, interceptAll: Bool) {
        self.label = label
        self.process = process
        self.process.capture = label
        self.interceptAll = interceptAll
    }
}
