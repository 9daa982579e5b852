import AFProxyAPI
import AFProxyControl
import AFProxyModel
import AFProxyWeb
import Logging

#if canImport(Glibc)
import Glibc
#endif

extension Daemon {
    /// Binds the dashboard, keeps its token beside the control socket (the runtime directory),
    /// and tells the control socket what `GET /v1/web` answers.
    static func startWeb(
        _ web: WebServer, _ text: String, _ configuration: DaemonConfiguration, _ environment: [String: String],
        control: ControlServer, logger: Logger
    ) async throws {
        let address = try ListenAddress.parse(text)
        let socket = ControlSocketPath.resolve(
            flag: configuration.controlSocket, environment: environment, uid: getuid())
        let directory = socket.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
        let tokenFile = (directory.isEmpty ? "." : directory) + "/web.token"
        let answer = try await web.bind(host: address.host, port: address.port, tokenFile: tokenFile)
        control.publishWeb(answer)
        if !LoopbackHost.contains(address.host) {
            logger.warning(
                "the web dashboard listens on \(text), beyond this machine: anyone who can reach it and has the token steers every task"
            )
        }
        logger.notice(
            "web dashboard at \(answer.url) (`afproxyctl web` prints it with its token; token in \(tokenFile))")
    }
}
