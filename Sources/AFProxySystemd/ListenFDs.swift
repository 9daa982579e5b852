import CSystemd

#if canImport(Glibc)
import Glibc
#endif

/// Listening sockets handed over by the service manager (socket activation), by name:
/// `afproxy.socket` names its descriptors `proxy`, `afproxy-control.socket` names its one
/// `control` (`FileDescriptorName=`). Each role that is handed over is adopted and not bound.
package struct ListenFDs: Sendable, Equatable {
    /// One descriptor and the name it was passed under (`unknown` when none was given).
    package struct Descriptor: Sendable, Equatable {
        package var fd: CInt
        package var name: String

        package init(fd: CInt, name: String) {
            self.fd = fd
            self.name = name
        }
    }

    package struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        package var description: String
    }

    /// Proxy ports to adopt; empty: bind the configured addresses.
    package var proxy: [CInt]
    /// The control socket to adopt; nil: bind it at its path.
    package var control: CInt?
    /// How descriptors without a known name were taken, for the log.
    package var notes: [String]

    package init(proxy: [CInt] = [], control: CInt? = nil, notes: [String] = []) {
        self.proxy = proxy
        self.control = control
        self.notes = notes
    }

    package var isEmpty: Bool { self.proxy.isEmpty && self.control == nil }

    /// Takes the descriptors passed to this process (`LISTEN_FDS`, `LISTEN_FDNAMES`, checked
    /// against `LISTEN_PID`) and unsets those variables so that no child inherits them.
    package static func take() throws(Failure) -> ListenFDs {
        var names: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
        let count = sd_listen_fds_with_names(1, &names)
        guard count >= 0 else {
            throw Failure(
                description: "cannot read the descriptors passed by systemd: \(String(cString: strerror(-count)))")
        }
        var descriptors: [Descriptor] = []
        for index in 0..<Int(count) {
            let name = names?[index].map { String(cString: $0) } ?? "unknown"
            descriptors.append(Descriptor(fd: SD_LISTEN_FDS_START + CInt(index), name: name))
        }
        if let names {
            for index in 0..<Int(count) { free(names[index]) }
            free(names)
        }
        return try Self.assign(descriptors, check: Self.inspect)
    }

    /// What a descriptor is: a listening stream socket, and whether it is a Unix one.
    package enum Kind: Sendable, Equatable {
        case inet
        case unix
        case unusable
    }

    /// Gives each descriptor its role. `proxy` and `control` by name; a single descriptor with
    /// any other name is the proxy port; with several, an unnamed Unix socket is the control
    /// socket and the others proxy ports.
    package static func assign(_ descriptors: [Descriptor], check: (CInt) -> Kind) throws(Failure) -> ListenFDs {
        var result = ListenFDs()
        for descriptor in descriptors {
            let kind = check(descriptor.fd)
            guard kind != .unusable else {
                throw Failure(
                    description:
                        "descriptor \(descriptor.fd) (\(descriptor.name)) passed by systemd is not a listening stream socket"
                )
            }
            var role = descriptor.name
            if role != "proxy" && role != "control" {
                role = descriptors.count == 1 || kind == .inet || result.control != nil ? "proxy" : "control"
                result.notes.append("descriptor \(descriptor.fd) named \(descriptor.name) taken as the \(role) socket")
            }
            if role == "proxy" {
                result.proxy.append(descriptor.fd)
            } else {
                guard result.control == nil else {
                    throw Failure(description: "systemd passed more than one descriptor named control")
                }
                result.control = descriptor.fd
            }
        }
        return result
    }

    static func inspect(_ fd: CInt) -> Kind {
        guard sd_is_socket(fd, AF_UNSPEC, CInt(SOCK_STREAM.rawValue), 1) > 0 else { return .unusable }
        return sd_is_socket(fd, AF_UNIX, CInt(SOCK_STREAM.rawValue), 1) > 0 ? .unix : .inet
    }
}
