import AFProxyAPI
import ArgumentParser
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

struct List: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List live tasks: ID KIND STATE METHOD URL STATUS PROGRESS RATE ETA AGE.")

    @ParentCommand var root: AFProxyCtl
    var global: GlobalOptions { self.root.global }
    @Flag(name: .long, help: "Include completed tasks from the history.") var all = false
    @Flag(name: .long, help: "Print the API's JSON.") var json = false
    @Option(name: .long, help: "Only tasks whose client process's executable has this file name (curl).")
    var process: String?
    @Option(name: .long, help: "Only tasks whose client process runs in this systemd unit.") var unit: String?
    @Option(name: .long, help: "Only tasks of this capture (afproxyctl run or capture): its name or id.") var capture:
        String?

    func run() throws {
        let body = try self.global.call("GET", self.all ? "/v1/tasks?all=1" : "/v1/tasks")
        let filter = ProcessFilter(process: self.process, unit: self.unit, capture: self.capture)
        if self.json && filter.isEmpty { return Console.output(String(decoding: body, as: UTF8.self)) }
        if self.json {
            var list = try Console.decoder().decode(TaskList.self, from: Data(body))
            list.tasks = list.tasks.filter(filter.matches)
            var out: [UInt8] = []
            list.writeJSON(to: &out)
            return Console.output(String(decoding: out, as: UTF8.self))
        }
        // Rows, not records: the table shows a few fields of each task.
        let rows = try TaskRow.list(fromJSON: body).filter(filter.matches)
        let width = Console.isTerminal ? TaskTable.terminalWidth() : nil
        Console.output(TaskTable(tasks: rows, terminal: Console.isTerminal, now: Date(), width: width).render())
    }
}

struct Show: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show every field of one task, its metrics as a timeline.")

    @ParentCommand var root: AFProxyCtl
    var global: GlobalOptions { self.root.global }
    @Argument(help: "The task's id.", completion: TaskIDCompletion.kind) var id: Int
    @Flag(name: .long, help: "Print the API's JSON.") var json = false
    @Flag(name: .long, help: "List the WebSocket messages a record rule kept, one a line.") var messages = false

    func run() throws {
        if self.messages {
            let body = try self.global.call("GET", "/v1/tasks/\(self.id)/messages")
            if self.json { return Console.output(String(decoding: body, as: UTF8.self)) }
            let list = try Console.decoder().decode(MessageList.self, from: Data(body))
            return Console.output(MessageLines(list: list).render())
        }
        let body = try self.global.call("GET", "/v1/tasks/\(self.id)")
        if self.json { return Console.output(String(decoding: body, as: UTF8.self)) }
        let task = try Console.decoder().decode(TaskRecord.self, from: Data(body))
        Console.output(TaskDetail(task: task, terminal: Console.isTerminal).render())
    }
}

/// suspend and resume: task ids or every live task.
struct VerbOptions: ParsableArguments {
    @Argument(help: "Task ids.", completion: TaskIDCompletion.kind) var ids: [Int] = []
    @Flag(name: .long, help: "Every live task.") var all = false
    @Flag(name: .long, help: "Print the API's JSON.") var json = false
}

/// cancel: task ids only; canceling everything at once is too easy a mistake to offer.
struct CancelOptions: ParsableArguments {
    @Argument(help: "Task ids.", completion: TaskIDCompletion.kind) var ids: [Int] = []
    @Flag(name: .long, help: "Print the API's JSON.") var json = false
}

func apply(_ verb: String, ids: [Int], all: Bool, json: Bool, _ global: GlobalOptions) throws {
    if all {
        guard ids.isEmpty else { throw ValidationError("give task ids or --all, not both") }
        let body = try global.call("POST", "/v1/tasks/\(verb)?all=1")
        if json { return Console.output(String(decoding: body, as: UTF8.self)) }
        let list = try Console.decoder().decode(TaskList.self, from: Data(body))
        let ids = list.tasks.map { String($0.id) }.joined(separator: " ")
        Console.output("\(verb): \(list.tasks.count) task(s)\(ids.isEmpty ? "" : ": " + ids)")
        return
    }
    guard !ids.isEmpty else {
        throw ValidationError("give at least one task id" + (verb == "cancel" ? "" : " (or --all)"))
    }
    var refused = false
    for id in ids {
        do {
            let body = try global.call("POST", "/v1/tasks/\(id)/\(verb)")
            if json {
                Console.output(String(decoding: body, as: UTF8.self))
            } else {
                let task = try Console.decoder().decode(TaskRecord.self, from: Data(body))
                Console.output("task \(task.id): \(task.state.rawValue)")
            }
        } catch let code as ExitCode where code == ExitCode(1) {
            refused = true
        }
    }
    if refused { throw ExitCode(1) }
}

struct Suspend: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Pause tasks in both directions, mid-transfer; nothing is lost.")
    @ParentCommand var root: AFProxyCtl
    var global: GlobalOptions { self.root.global }
    @OptionGroup var options: VerbOptions
    func run() throws {
        try apply("suspend", ids: self.options.ids, all: self.options.all, json: self.options.json, self.global)
    }
}

struct Resume: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Continue suspended tasks exactly where they stopped.")
    @ParentCommand var root: AFProxyCtl
    var global: GlobalOptions { self.root.global }
    @OptionGroup var options: VerbOptions
    func run() throws {
        try apply("resume", ids: self.options.ids, all: self.options.all, json: self.options.json, self.global)
    }
}

struct Cancel: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Abort tasks: the upstream transfer stops and the client's connection closes.")
    @ParentCommand var root: AFProxyCtl
    var global: GlobalOptions { self.root.global }
    @OptionGroup var options: CancelOptions
    func run() throws {
        try apply("cancel", ids: self.options.ids, all: false, json: self.options.json, self.global)
    }
}

struct Stats: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Tasks by state and kind, totals served, bytes up and down, uptime, version.")

    @ParentCommand var root: AFProxyCtl
    var global: GlobalOptions { self.root.global }
    @Flag(name: .long, help: "Print the API's JSON.") var json = false

    func run() throws {
        let body = try self.global.call("GET", "/v1/stats")
        if self.json { return Console.output(String(decoding: body, as: UTF8.self)) }
        let stats = try Console.decoder().decode(SessionStats.self, from: Data(body))
        func counts(_ values: [String: Int]) -> String {
            values.isEmpty
                ? "none" : values.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        }
        Console.output(
            """
            afproxy \(stats.version), up \(Formatting.duration(stats.uptimeSeconds))
            live tasks     \(stats.live) (\(counts(stats.byState)); \(counts(stats.byKind)))
            served         \(stats.served) (\(stats.failed) failed, \(stats.canceled) canceled), \(stats.history) in history
            bytes          up \(Formatting.bytes(stats.bytesUp)), down \(Formatting.bytes(stats.bytesDown))
            connections    \(stats.openConnections) open
            """)
    }
}

struct Watch: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Follow tasks live: a refreshing table on a terminal, one event a line otherwise.")

    @ParentCommand var root: AFProxyCtl
    var global: GlobalOptions { self.root.global }
    @Flag(name: .long, help: "Print each event as the API's JSON line.") var json = false
    @Option(name: .long, help: "Seconds between refreshes of the table.") var interval = 0.5

    func run() throws {
        if Console.isTerminal && !self.json {
            while true {
                let body = try self.global.call("GET", "/v1/tasks")
                let rows = try TaskRow.list(fromJSON: body)
                let table = TaskTable(tasks: rows, terminal: true, now: Date(), width: TaskTable.terminalWidth())
                    .render()
                Console.output(
                    "\u{1B}[H\u{1B}[2J" + "afproxy — \(rows.count) live task(s), Ctrl-C to stop\n\n" + table)
                usleep(UInt32(max(0.1, self.interval) * 1_000_000))
            }
        }
        let client = self.global.client
        let json = self.json
        do {
            _ = try client.stream("/v1/events") { line in
                if json { Console.output(line); return true }
                switch try? Console.decoder().decode(StreamEvent.self, from: Data(line.utf8)) {
                case .task(let event): Console.output(Self.describe(event))
                case .network(let event): Console.output(Self.describe(event))
                case .missed(let missed): Console.output(Self.describe(missed))
                case nil: break
                }
                return true
            }
        } catch {
            throw GlobalOptions.unavailable(client, error)
        }
    }

    /// `2025-05-01T10:00:00Z network-lost network unreachable since …`.
    static func describe(_ event: NetworkEvent, now: Date = Date()) -> String {
        "\(now.formatted(.iso8601)) \(event.event.rawValue) network \(ReachabilityText.describe(event.network))"
    }

    /// `2025-05-01T10:00:00Z missed    12 events while not reading`: what the daemon dropped for us.
    static func describe(_ missed: MissedEvents, now: Date = Date()) -> String {
        "\(now.formatted(.iso8601)) missed    \(missed.missed) event\(missed.missed == 1 ? "" : "s") while not reading"
    }

    static func describe(_ event: TaskEvent, now: Date = Date()) -> String {
        let task = event.task
        var line =
            "\(now.formatted(.iso8601)) \(event.event.rawValue.padding(9))#\(task.id) \(task.kind.rawValue) \(task.method) \(task.url)"
        switch event.event {
        case .progress:
            line += " " + Formatting.progress(Formatting.mainProgress(task), terminal: false)
            if let waiting = task.waiting { line += " (\(waiting))" }
        case .completed:
            line +=
                " " + (task.status.map(String.init) ?? "-") + (task.error.map { " error: \($0)" } ?? "")
                + " down \(Formatting.bytes(task.download.completed)) up \(Formatting.bytes(task.upload.completed))"
            if task.error == nil, let file = task.file { line += " file: \(file.path)" }
        case .held:
            if let rule = task.heldBy { line += " by rule \(rule)" }
        case .edited:
            if let last = task.edits.last { line += " " + last.change }
        case .resumedAtOffset:
            // The event's own offset is the last resume the task recorded.
            if let resume = task.resumes.last {
                line += " at \(resume.offset) B (\(Formatting.bytes(resume.offset)))"
            }
        default:
            break
        }
        return line
    }
}
