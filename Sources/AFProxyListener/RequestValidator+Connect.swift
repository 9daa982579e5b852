import AFProxyModel
import NIOHTTP1

/// CONNECT: the tunnel's target, checked before anything is opened. 400 for a target that is not
/// `host:port`, 403 naming the allowed ports for a port outside them, and the same version, size
/// and loop checks as the other requests.
extension RequestValidator {
    package func validateConnect(_ head: HTTPRequestHead, client: String) -> Result<StreamRequest, ProxyRefusal> {
        if let refusal = self.commonRefusal(head) { return .failure(refusal) }
        if let origin = self.knownOrigin {
            return .failure(
                ProxyRefusal(.badRequest, "CONNECT inside the connection to \(origin.authority) is refused")
            )
        }
        let user: String?
        switch self.authenticatedUser(head) {
        case .success(let authenticated): user = authenticated
        case .failure(let refusal): return .failure(refusal)
        }
        let target: ConnectTarget
        switch ConnectTarget.parse(head.uri) {
        case .success(let parsed): target = parsed
        case .failure(let refusal): return .failure(refusal)
        }
        guard self.connectPorts.allows(target.port) else {
            let message =
                "CONNECT to port \(target.port) is not allowed; allowed ports: \(self.connectPorts) "
                + "(more with --allow-connect-port or allow-connect-port in the config file)"
            return .failure(ProxyRefusal(.forbidden, message))
        }
        let received = head.headers.map { HTTPHeaderField($0.name, $0.value) }
        if case .failure(let refusal) = self.receivedVia(received) { return .failure(refusal) }
        return .success(
            StreamRequest(
                host: target.host, port: target.port, headers: HopByHopHeaders.removing(from: received), client: client,
                proxyUser: user)
        )
    }
}
