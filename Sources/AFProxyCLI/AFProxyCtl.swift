import AFProxyAPI
import ArgumentParser
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// `afproxyctl`: lists, shows and steers the daemon's tasks over its control socket.
///
/// Exit codes: 0 done; 1 the daemon refused (unknown id, illegal transition); 2 usage error;
/// 69 (EX_UNAVAILABLE) the daemon is not reachable.
package struct AFProxyCtl: ParsableCommand {
    package static let configuration = CommandConfiguration(
        commandName: "afproxyctl",
        abstract: "Watch and steer the requests going through afproxy.",
        discussion: "Exit codes: 0 done, 1 the daemon refused, 2 usage error, 69 the daemon is not reachable.",
        version: AFProxyVersion.current,
        subcommands: [
            List.self, Show.self, Suspend.self, Resume.self, Cancel.self, Watch.self, Stats.self, Status.self,
            Download.self, Pin.self, Har.self, CA.self,
            Web.self,
            Throttle.self, Unthrottle.self,
            Hold.self, Intercept.self, Rules.self,
            Record.self, Body.self, Replay.self, Edit.self, Respond.self, Map.self,
            Env.self, Run.self, Capture.self, CaptureInit.self, CaptureHold.self,
        ]
    )

    @OptionGroup var global: GlobalOptions

    package init() {}

    /// Runs the command line, mapping usage errors to exit code 2 (ArgumentParser's default is 64).
    package static func runMain() -> Never {
        do {
            var command = try Self.parseAsRoot()
            try command.run()
            Glibc.exit(0)
        } catch {
            if Self.exitCode(for: error) == .validationFailure {
                Console.error(Self.fullMessage(for: error))
                Glibc.exit(2)
            }
            Self.exit(withError: error)
        }
    }
}

struct GlobalOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "The daemon's control socket (default: $AFPROXY_CONTROL_SOCKET, $RUNTIME_DIRECTORY/control.sock, "
                + "$XDG_RUNTIME_DIR/afproxy/control.sock, /tmp/afproxy-$UID/control.sock; if nothing is there, "
                + "the system service's /run/afproxy/control.sock).",
            valueName: "path"))
    var socket: String?

    var client: ControlClient {
        ControlClient(
            socketPath: ControlSocketPath.resolveForClient(
                flag: self.socket, environment: ProcessEnvironment.current(), uid: getuid(),
                exists: { access($0, F_OK) == 0 }))
    }

    /// One request; refusals and an absent daemon become the documented exit codes.
    func call(_ method: String, _ target: String, body: [UInt8] = []) throws -> [UInt8] {
        let client = self.client
        let response: ControlClient.Response
        do {
            response = try client.request(method, target, body: body)
        } catch {
            throw Self.unavailable(client, error)
        }
        guard (200..<300).contains(response.status) else {
            let message =
                (try? JSONDecoder().decode(ControlErrorBody.self, from: Data(response.body)).error)
                ?? String(decoding: response.body, as: UTF8.self)
            Console.error("afproxyctl: \(message)")
            throw ExitCode(1)
        }
        return response.body
    }

    static func unavailable(_ client: ControlClient, _ error: ControlClient.Failure) -> ExitCode {
        switch error {
        case .unreachable(let reason):
            Console.error(
                """
                afproxyctl: afproxy is not reachable at \(client.socketPath) (\(reason)).
                Start it with `afproxy` (or `systemctl start afproxy`), or point --socket at its control socket.
                """)
        case .protocolError(let reason):
            Console.error("afproxyctl: the control socket at \(client.socketPath) answered badly: \(reason)")
        }
        return ExitCode(69)
    }
}

enum Console {
    static var isTerminal: Bool { isatty(1) == 1 }

    static func error(_ message: String) {
        let line = message.hasSuffix("\n") ? message : message + "\n"
        _ = line.withCString { write(2, $0, strlen($0)) }
    }

    /// Without a newline: `download --wait` redraws its line in place with `\r`.
    static func errorText(_ text: String) {
        _ = text.withCString { write(2, $0, strlen($0)) }
    }

    static func output(_ text: String) {
        let line = text.hasSuffix("\n") ? text : text + "\n"
        _ = line.withCString { write(1, $0, strlen($0)) }
    }

    static func decoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }
}
