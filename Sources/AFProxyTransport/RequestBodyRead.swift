/// The delegate's answer to the engine's request for upload bytes (`HTTPTransferDelegate`).
package enum RequestBodyRead: Sendable, Equatable {
    case bytes(Int)
    /// Nothing buffered yet: pause sending until more arrives from the client.
    case pause
    /// The request body is complete.
    case end
}
