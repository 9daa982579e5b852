import AFProxyModel
import AFProxyRules
import CCurl

#if canImport(Glibc)
import Glibc
#endif

/// The destination rules (`DestinationPolicy`) applied to curl's transfers, at three points:
/// the request's host before the transfer starts; each address curl is about to open a socket
/// for (its open-socket callback), so that no connection to a refused address is even made;
/// and, before each request goes out (the prerequest callback), the host of the URL curl is
/// requesting now, which covers a redirect a download follows, and the address of the
/// connection, which covers one taken from curl's cache after a reload changed the rules.
///
/// Through an upstream proxy (`upstream-proxy`), curl opens its socket to the proxy, never to the
/// origin, and the origin's name is resolved by the proxy, if at all. The address checks then
/// see the proxy's address, which a person configured on purpose (often a private one that
/// `deny-private-destinations` would refuse), so they let it pass; the origin's host name is
/// still checked by name, before the transfer and before each request. What the name resolves
/// to on the proxy's side is the proxy's policy to enforce: afproxy cannot see it.
enum DestinationCheck {
    static func denial(ofURL url: String, by policy: DestinationPolicy) -> DestinationDenial? {
        guard !policy.isOpen, let host = LoopbackHost.host(ofURL: url) else { return nil }
        return policy.denial(host: host)
    }

    /// Refuses an address by answering no socket: curl then tries the host's next address, and
    /// fails with "could not connect" when none is left, which `deniedAddress` then replaces.
    static let openSocket: curl_opensocket_callback = { userdata, _, address in
        guard let userdata, let address else { return CURL_SOCKET_BAD }
        let transfer = Unmanaged<UpstreamTransfer>.fromOpaque(userdata).takeUnretainedValue()
        let host = LoopbackHost.host(ofURL: Self.currentURL(of: transfer)) ?? "?"
        if transfer.upstreamProxy == nil, let ip = Self.address(address),
            let denial = transfer.request.destinations.denial(address: ip, host: host)
        {
            transfer.deniedAddress = .destinationDenied(denial)
            return CURL_SOCKET_BAD
        }
        return socket(address.pointee.family, address.pointee.socktype, address.pointee.protocol)
    }

    static func denial(before transfer: UpstreamTransfer, primaryIP: UnsafeMutablePointer<CChar>?) -> DestinationDenial?
    {
        let policy = transfer.request.destinations
        guard !policy.isOpen else { return nil }
        let url = Self.currentURL(of: transfer)
        guard let host = LoopbackHost.host(ofURL: url) else { return nil }
        if let denial = policy.denial(host: host) { return denial }
        guard policy.checksAddresses, transfer.upstreamProxy == nil, let primaryIP,
            let address = IPAddress(String(cString: primaryIP))
        else {
            return nil
        }
        return policy.denial(address: address, host: host)
    }

    /// The URL being requested now: after a redirect, the one it led to.
    static func currentURL(of transfer: UpstreamTransfer) -> String {
        guard let handle = transfer.handle else { return transfer.url }
        var pointer: UnsafeMutablePointer<CChar>? = nil
        guard afc_easy_getinfo_string(handle.raw, CURLINFO_EFFECTIVE_URL, &pointer) == CURLE_OK, let pointer else {
            return transfer.url
        }
        return String(cString: pointer)
    }

    private static func address(_ address: UnsafeMutablePointer<curl_sockaddr>) -> IPAddress? {
        let offset = MemoryLayout<curl_sockaddr>.offset(of: \curl_sockaddr.addr)!
        let raw = UnsafeRawPointer(address) + offset
        switch address.pointee.family {
        case AF_INET:
            var v4 = raw.loadUnaligned(as: sockaddr_in.self).sin_addr
            return IPAddress(bytes: withUnsafeBytes(of: &v4) { Array($0) })
        case AF_INET6:
            guard Int(address.pointee.addrlen) >= MemoryLayout<sockaddr_in6>.size else { return nil }
            var v6 = raw.loadUnaligned(as: sockaddr_in6.self).sin6_addr
            return IPAddress(bytes: withUnsafeBytes(of: &v6) { Array($0) })
        default:
            return nil
        }
    }
}
