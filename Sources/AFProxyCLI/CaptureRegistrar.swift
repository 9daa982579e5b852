import AFProxyAPI
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// Hands a capture's sockets to the daemon (its capture socket, `SCM_RIGHTS`): what `run` does
/// once, and `capture-hold` again after each restart of the daemon.
enum CaptureRegistrar {
    /// Sends the registration and the sockets; answers the open connection, whose end is the
    /// capture's, or why the daemon refused.
    static func register(
        _ registration: CaptureRegistration, sockets: [Int32], at path: String
    ) -> Result<Int32, CaptureSetupFailure> {
        let connection = socket(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard connection >= 0 else {
            return .failure(CaptureSetupFailure("socket: \(String(cString: strerror(errno)))"))
        }
        let connected = UnixSocketAddress.connect(connection, to: path)
        guard connected == 0 else {
            close(connection)
            return .failure(
                CaptureSetupFailure(
                    "the daemon takes no captures at \(path) (\(String(cString: strerror(connected))))"))
        }
        let body = (try? JSONEncoder().encode(registration)).map { [UInt8]($0) } ?? []
        guard DescriptorPassing.send(connection, bytes: body, descriptors: sockets) == 0,
            case .success(let reply) = DescriptorPassing.receive(connection, maxBytes: CaptureRegistration.maxMessage),
            let answer = try? JSONDecoder().decode(CaptureAnswer.self, from: Data(reply.bytes))
        else {
            close(connection)
            return .failure(CaptureSetupFailure("the daemon closed the capture socket without an answer"))
        }
        guard answer.id != nil else {
            close(connection)
            return .failure(CaptureSetupFailure(answer.error ?? "the daemon refused the capture"))
        }
        return .success(connection)
    }
}
