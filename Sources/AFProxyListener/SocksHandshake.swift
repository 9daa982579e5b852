import AFProxyModel
import AFProxyRules
import NIOCore

/// The server side of a SOCKS5 handshake (RFC 1928), with username/password authentication
/// (RFC 1929) when the proxy has users, as a value: fed the client's bytes, it answers what to
/// write and what to do next, and never touches a socket. It reads one step at a time, so a
/// client that sends its greeting, credentials and request at once is read in order; what
/// follows the request (the client's first bytes for the destination) stays in the buffer.
///
/// Only CONNECT is served: BIND and UDP ASSOCIATE are answered "command not supported" (a local
/// proxy has no use for a listening port opened for a client, and UDP other than DNS is not
/// relayed).
///
/// Not swift-nio-extras' NIOSOCKS: its server handler would bring a package for what is about a
/// hundred lines here, it leaves RFC 1929's negotiation to its user anyway, and it ends the
/// connection with an error on an address type it does not know where RFC 1928 asks for a reply;
/// a value that answers steps is also what the tests drive without a channel.
struct SocksHandshake {
    /// What the caller does next.
    enum Step: Equatable {
        /// The step needs bytes that have not arrived: read more.
        case needMore
        /// Write these bytes, then feed the rest of the buffer again.
        case reply([UInt8])
        /// Check these credentials (slow: a password hash), then call `credentialsChecked`.
        case verify(ProxyCredentials)
        /// The request: open a connection to `host:port` and answer with `reply(_:)`.
        case connect(host: String, port: Int)
        /// Write `reply` (if any), then close: the handshake cannot go on.
        case refuse([UInt8]?, reason: String)
    }

    /// RFC 1928 §6's reply codes.
    enum ReplyCode: UInt8, Sendable {
        case succeeded = 0
        case generalFailure = 1
        case notAllowed = 2
        case networkUnreachable = 3
        case hostUnreachable = 4
        case connectionRefused = 5
        case ttlExpired = 6
        case commandNotSupported = 7
        case addressTypeNotSupported = 8
    }

    private enum State {
        case greeting
        case credentials
        case verifying
        case request
        case connecting
        case done
    }

    private var state = State.greeting
    /// Whether the client must name a user and password (the proxy has users).
    let requiresCredentials: Bool

    init(requiresCredentials: Bool) {
        self.requiresCredentials = requiresCredentials
    }

    /// The next step on what `buffer` holds; what the step used is read from it.
    mutating func read(_ buffer: inout ByteBuffer) -> Step {
        switch self.state {
        case .greeting: return self.readGreeting(&buffer)
        case .credentials: return self.readCredentials(&buffer)
        case .request: return self.readRequest(&buffer)
        case .verifying, .connecting, .done: return .needMore
        }
    }

    /// The answer to `verify`: the request follows, or the connection closes (RFC 1929: a
    /// failure status, then the server closes).
    mutating func credentialsChecked(_ valid: Bool) -> Step {
        guard self.state == .verifying else { return .needMore }
        guard valid else {
            self.state = .done
            return .refuse([0x01, 0x01], reason: "wrong user name or password")
        }
        self.state = .request
        return .reply([0x01, 0x00])
    }

    /// The reply to the request once the connection is open (`succeeded`) or has failed; the
    /// handshake is over either way.
    mutating func reply(_ code: ReplyCode) -> [UInt8] {
        self.state = .done
        return Self.reply(code)
    }

    /// A reply with the zero IPv4 address and port as the bound address: the client cannot
    /// reach afproxy's upstream socket anyway, and clients ignore it for CONNECT.
    static func reply(_ code: ReplyCode) -> [UInt8] {
        [0x05, code.rawValue, 0x00, 0x01, 0, 0, 0, 0, 0, 0]
    }

    private mutating func readGreeting(_ buffer: inout ByteBuffer) -> Step {
        guard let version = buffer.getInteger(at: buffer.readerIndex, as: UInt8.self) else { return .needMore }
        guard version == 0x05 else {
            self.state = .done
            return .refuse(nil, reason: Self.notSocks5(version))
        }
        guard let count = buffer.getInteger(at: buffer.readerIndex + 1, as: UInt8.self),
            let methods = buffer.getBytes(at: buffer.readerIndex + 2, length: Int(count))
        else { return .needMore }
        buffer.moveReaderIndex(forwardBy: 2 + Int(count))
        let wanted: UInt8 = self.requiresCredentials ? 0x02 : 0x00
        guard methods.contains(wanted) else {
            self.state = .done
            let reason =
                self.requiresCredentials
                ? "the client offers no username/password authentication, which this proxy requires"
                : "the client offers no method this proxy accepts (no authentication)"
            return .refuse([0x05, 0xFF], reason: reason)
        }
        self.state = self.requiresCredentials ? .credentials : .request
        return .reply([0x05, wanted])
    }

    private mutating func readCredentials(_ buffer: inout ByteBuffer) -> Step {
        let start = buffer.readerIndex
        guard let version = buffer.getInteger(at: start, as: UInt8.self) else { return .needMore }
        guard version == 0x01 else {
            self.state = .done
            return .refuse([0x01, 0x01], reason: "not a username/password negotiation (version \(version))")
        }
        guard let userLength = buffer.getInteger(at: start + 1, as: UInt8.self),
            let user = buffer.getBytes(at: start + 2, length: Int(userLength)),
            let passwordLength = buffer.getInteger(at: start + 2 + Int(userLength), as: UInt8.self),
            let password = buffer.getBytes(at: start + 3 + Int(userLength), length: Int(passwordLength))
        else { return .needMore }
        buffer.moveReaderIndex(forwardBy: 3 + Int(userLength) + Int(passwordLength))
        self.state = .verifying
        return .verify(
            ProxyCredentials(
                user: String(decoding: user, as: UTF8.self), password: String(decoding: password, as: UTF8.self)))
    }

    private mutating func readRequest(_ buffer: inout ByteBuffer) -> Step {
        let start = buffer.readerIndex
        guard let head = buffer.getBytes(at: start, length: 4) else { return .needMore }
        guard head[0] == 0x05 else {
            self.state = .done
            return .refuse(nil, reason: Self.notSocks5(head[0]))
        }
        let addressLength: Int
        switch head[3] {
        case 0x01: addressLength = 4
        case 0x04: addressLength = 16
        case 0x03:
            guard let length = buffer.getInteger(at: start + 4, as: UInt8.self) else { return .needMore }
            addressLength = 1 + Int(length)
        default:
            self.state = .done
            return .refuse(Self.reply(.addressTypeNotSupported), reason: "unknown address type \(head[3])")
        }
        guard let address = buffer.getBytes(at: start + 4, length: addressLength),
            let port = buffer.getInteger(at: start + 4 + addressLength, as: UInt16.self)
        else { return .needMore }
        buffer.moveReaderIndex(forwardBy: 4 + addressLength + 2)
        guard head[1] == 0x01 else {
            self.state = .done
            let command = head[1] == 0x02 ? "BIND" : head[1] == 0x03 ? "UDP ASSOCIATE" : "command \(head[1])"
            return .refuse(Self.reply(.commandNotSupported), reason: "\(command) is not supported, only CONNECT")
        }
        let host: String
        if head[3] == 0x03 {
            let name = address.dropFirst()
            // A name is what a URL's host may hold: no byte a request line or a log would split on.
            guard !name.isEmpty, name.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "/") }) else {
                self.state = .done
                return .refuse(Self.reply(.generalFailure), reason: "the destination name holds bytes no host name may")
            }
            host = String(decoding: name, as: UTF8.self)
        } else {
            // NIO writes the address as text (RFC 5952 for IPv6); no socket is involved.
            guard
                let text = try? SocketAddress(packedIPAddress: ByteBuffer(bytes: address), port: Int(port)).ipAddress
            else {
                self.state = .done
                return .refuse(Self.reply(.addressTypeNotSupported), reason: "an address NIO cannot read")
            }
            host = text
        }
        guard port != 0 else {
            self.state = .done
            return .refuse(Self.reply(.generalFailure), reason: "the destination port is 0")
        }
        self.state = .connecting
        return .connect(host: host, port: Int(port))
    }

    private static func notSocks5(_ version: UInt8) -> String {
        switch version {
        case 0x04: "a SOCKS4 request: only SOCKS5 is served"
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): "an HTTP request: this is a SOCKS5 port"
        default: "not a SOCKS5 greeting (first byte \(version))"
        }
    }
}

extension SocksHandshake.ReplyCode {
    /// The reply for a tunnel that could not be opened, by the failure's stable code.
    init(_ failure: TaskFailure) {
        switch failure.code {
        case "connection-refused": self = .connectionRefused
        case "dns-failure": self = .hostUnreachable
        case "unreachable": self = .networkUnreachable
        case "connect-timeout": self = .ttlExpired
        case "destination-denied", "refused-by-policy": self = .notAllowed
        default: self = .generalFailure
        }
    }
}
