import ArgumentParser
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// `afproxyctl capture SERVICE`: a systemd service's connections go through afproxy from its
/// next start, with nothing changed in the service (a drop-in, `ServiceCapture`); `--remove`
/// undoes it, `--list` says which services are captured and whether their namespace is up.
/// Writes files only: the daemon need not run, and systemd is asked to reload when it runs here.
struct Capture: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Capture a systemd service's connections from its next start (or stop, or list).",
        discussion: """
            Writes a drop-in (SERVICE.service.d/afproxy-capture.conf) that makes the service require \
            afproxy-capture@SERVICE.service, which keeps a network namespace at /run/netns/afproxy-SERVICE \
            with afproxy's sockets in it, and join that namespace (NetworkNamespacePath=). Its TCP \
            connections and DNS queries then reach afproxy as afproxyctl run's do; its tasks name the unit. \
            Takes effect when the service next starts (systemctl restart SERVICE). Needs root (the drop-in \
            goes into /etc/systemd/system).
            """)

    @Argument(help: ArgumentHelp("The service (nginx or nginx.service).", valueName: "service"))
    var service: String?

    @Flag(help: "Stop capturing the service (from its next start).")
    var remove = false

    @Flag(help: "List the captured services and whether their namespace is up.")
    var list = false

    @Option(help: ArgumentHelp("Where the drop-in goes.", valueName: "directory"))
    var unitDirectory = ServiceCapture.unitDirectory

    mutating func validate() throws {
        if self.list {
            guard self.service == nil, !self.remove else { throw ValidationError("--list takes no service") }
        } else if self.service == nil {
            throw ValidationError("name the service: afproxyctl capture SERVICE (or --list)")
        }
    }

    func run() throws {
        if self.list { return self.printList() }
        let capture: ServiceCapture
        do {
            capture = try ServiceCapture(service: self.service ?? "")
        } catch {
            Self.fail(error.description)
        }
        if self.remove {
            self.removeDropIn(capture)
        } else {
            self.writeDropIn(capture)
        }
    }

    private func writeDropIn(_ capture: ServiceCapture) {
        let directory = capture.dropInDirectory(in: self.unitDirectory)
        let path = capture.dropInPath(in: self.unitDirectory)
        if let failure = Self.writeFile(capture.dropIn, to: path, directory: directory) {
            Self.fail("cannot write \(path): \(failure)\(geteuid() == 0 ? "" : " (run it as root)")")
        }
        Console.output("wrote \(path)")
        if self.unitDirectory == ServiceCapture.unitDirectory, !Self.templateInstalled {
            Console.error(
                "afproxyctl capture: afproxy-capture@.service is not installed (make install or the package puts it "
                    + "in place): \(capture.service) will not start until it is")
        }
        self.reload()
        Console.output(
            "\(capture.service) is captured from its next start: systemctl restart \(capture.service)")
    }

    private func removeDropIn(_ capture: ServiceCapture) {
        let path = capture.dropInPath(in: self.unitDirectory)
        guard unlink(path) == 0 else {
            if errno == ENOENT { Self.fail("\(capture.service) is not captured (no \(path))") }
            Self.fail("cannot remove \(path): \(String(cString: strerror(errno)))")
        }
        // Only when nothing else is in it: the administrator's own drop-ins stay.
        rmdir(capture.dropInDirectory(in: self.unitDirectory))
        Console.output("removed \(path)")
        self.reload()
        Console.output(
            "\(capture.service) is no longer captured from its next start: systemctl restart \(capture.service)")
    }

    private func printList() {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: self.unitDirectory)) ?? []
        let captures = ServiceCapture.captured(in: entries) { entry in
            access("\(self.unitDirectory)/\(entry)/\(ServiceCapture.dropInName)", F_OK) == 0
        }
        guard !captures.isEmpty else {
            return Console.output("no service is captured (no \(ServiceCapture.dropInName) in \(self.unitDirectory))")
        }
        let width = captures.map(\.service.count).max() ?? 0
        for capture in captures {
            let path = capture.namespacePath()
            let state = NamespaceFile.isMounted(path) ? "up" : "not up (the service is not running)"
            Console.output(
                capture.service + String(repeating: " ", count: width - capture.service.count)
                    + "  namespace \(path) \(state)")
        }
    }

    /// `systemctl daemon-reload` when systemd runs here and the drop-in went where it reads.
    private func reload() {
        guard self.unitDirectory == ServiceCapture.unitDirectory, access("/run/systemd/system", F_OK) == 0,
            let systemctl = ToolPath.find("systemctl")
        else { return }
        if case .success(let child) = ChildProcess.spawn(systemctl, ["systemctl", "daemon-reload"]), child.wait() == 0 {
            return
        }
        Console.error("afproxyctl capture: systemctl daemon-reload failed; run it before restarting the service")
    }

    /// The template unit, where systemd looks for system units.
    private static var templateInstalled: Bool {
        ["/etc/systemd/system", "/usr/local/lib/systemd/system", "/usr/lib/systemd/system", "/lib/systemd/system"]
            .contains { access("\($0)/afproxy-capture@.service", F_OK) == 0 }
    }

    /// Writes `text` beside `path` and renames it there (systemd never reads half a drop-in);
    /// answers why it could not. By hand rather than Foundation's atomic write: its errors do not
    /// name the system's reason in words, and the mode must be 0644 whatever the umask.
    private static func writeFile(_ text: String, to path: String, directory: String) -> String? {
        if mkdir(directory, 0o755) != 0, errno != EEXIST { return String(cString: strerror(errno)) }
        let temporary = "\(path).tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { return String(cString: strerror(errno)) }
        fchmod(fd, 0o644)
        let written = text.withCString { write(fd, $0, strlen($0)) }
        let failure = written == text.utf8.count ? nil : String(cString: strerror(errno))
        close(fd)
        guard failure == nil, rename(temporary, path) == 0 else {
            let reason = failure ?? String(cString: strerror(errno))
            unlink(temporary)
            return reason
        }
        return nil
    }

    private static func fail(_ message: String) -> Never {
        Console.error("afproxyctl capture: \(message)")
        Glibc.exit(1)
    }
}
