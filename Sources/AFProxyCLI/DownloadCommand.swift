import AFProxyAPI
import ArgumentParser
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// `afproxyctl download URL`: a download the daemon runs itself, through broken connections and
/// restarts. afproxyctl only starts it (and with `--wait` follows it); the task is the daemon's.
struct Download: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Start a download task in the daemon: resumed where it broke off, kept across restarts.",
        discussion: """
            Prints the new task's id (--json: its JSON). With --wait, follows it until it ends: progress on \
            stderr, then the final path on stdout and exit 0; exit 1 and the reason if it failed or was \
            canceled; Ctrl-C (exit 130) stops the waiting, not the download.
            """)

    @ParentCommand var root: AFProxyCtl
    var global: GlobalOptions { self.root.global }
    @Argument(help: "An http:// or https:// URL.") var url: String
    @Option(
        name: .customShort("o"),
        help: ArgumentHelp(
            "Where the file goes, relative to this directory (default: a name from the URL in the daemon's "
                + "download-dir).", valueName: "path"))
    var output: String?
    @Option(name: .long, help: ArgumentHelp("An extra request field, 'Name: value'; repeatable.", valueName: "field"))
    var header: [String] = []
    @Option(name: .long, help: ArgumentHelp("The SHA-256 the file must have, 64 hex digits.", valueName: "hex"))
    var sha256: String?
    @Flag(name: .long, help: "Replace an existing file.") var force = false
    @Flag(name: .long, help: "Keep the partial file when the download is canceled or fails.") var keepPartial = false
    @Option(
        name: .long,
        help: ArgumentHelp(
            "A public-key pin the origin's key must match, sha256//BASE64 (repeatable; replaces the host's "
                + "pins from the config for this download).", valueName: "pin"))
    var pin: [String] = []
    @Flag(name: .long, help: "Skip TLS verification for this download only (marked in list and show, logged).")
    var insecure = false
    @Flag(name: .long, help: "Follow the download until it ends.") var wait = false
    @Flag(name: .long, help: "Print the API's JSON.") var json = false

    var arguments: DownloadArguments {
        DownloadArguments(
            url: self.url, output: self.output, headers: self.header, sha256: self.sha256, force: self.force,
            keepPartial: self.keepPartial, pins: self.pin, insecure: self.insecure)
    }

    func run() throws {
        // Only a relative -o needs the directory; without one, a vanished directory does not matter.
        let relative = self.output.map { !$0.hasPrefix("/") } ?? false
        let directory = relative ? try Self.workingDirectory() : "/"
        let body: DownloadRequestBody
        do {
            body = try self.arguments.body(directory: directory)
        } catch {
            switch error {
            case .usage(let message): throw ValidationError(message)
            case .refused(let message):
                Console.error("afproxyctl: \(message)")
                throw ExitCode(1)
            }
        }
        // Ctrl-C is caught from before the download exists: one that came between the daemon's
        // answer and the follower's start ended the process without a word about the download
        // going on (seen on a busy machine).
        if self.wait { Interrupt.catchIt() }
        let answer = try self.global.call("POST", "/v1/downloads", body: try Self.encoded(body))
        let task = try Console.decoder().decode(TaskRecord.self, from: Data(answer))
        if self.wait {
            return try DownloadFollower(global: self.global, id: task.id, json: self.json).run()
        }
        Console.output(self.json ? String(decoding: answer, as: UTF8.self) : String(task.id))
    }

    /// Sorted keys and unescaped slashes, as the daemon writes its JSON: the body reads the same
    /// in a log or a packet capture as in docs/downloads.md.
    static func encoded(_ body: DownloadRequestBody) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return Array(try encoder.encode(body))
    }

    private static func workingDirectory() throws -> String {
        guard let pointer = getcwd(nil, 0) else {
            Console.error("afproxyctl: cannot resolve -o: the working directory is gone")
            throw ExitCode(1)
        }
        defer { free(pointer) }
        return String(cString: pointer)
    }
}
