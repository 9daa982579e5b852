/// A host and port as people read them in logs and task records: `127.0.0.1:3128`, and an IPv6
/// address in brackets, `[::1]:3128`, so that its colons are not taken for the port's.
package enum EndpointText {
    package static func of(host: String, port: Int) -> String {
        host.contains(":") && !host.hasPrefix("[") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }
}
