import AFProxyCurl
import AFProxyModel
import AFProxyRules
import AFProxyStore
import FoundationEssentials

extension SessionManager {
    /// Registers a download task for `spec`, publishes `created` and queues it; the answer is its
    /// record. Refused before any task exists when it cannot succeed as asked: a URL that is not
    /// http(s), a file the daemon cannot make there, an existing file without `force`, a path
    /// another download is making.
    package func startDownload(_ spec: DownloadSpec) throws(DownloadRefusal) -> TaskRecord {
        let settings = self.downloads.settings
        guard let name = DownloadURL.fileName(of: spec.url) else {
            throw DownloadRefusal(
                400, "only http:// and https:// URLs with a host can be downloaded: \(spec.url.prefix(200))")
        }
        if let sha256 = spec.sha256, sha256.utf8.count != 64 || !sha256.utf8.allSatisfy(\.isHexDigit) {
            throw DownloadRefusal(400, "sha256 must be 64 hexadecimal digits")
        }
        if let pins = spec.pins {
            do throws(PinError) {
                for pin in pins { _ = try PinSet.parse(pin) }
            } catch {
                throw DownloadRefusal(400, error.message)
            }
        }
        let namedByAnswer = spec.path == nil && name == nil
        let path: String
        if let given = spec.path {
            path = given
        } else {
            path = try self.provisionalPath(name, in: settings.downloadDirectory)
        }
        if let refusal = DownloadTarget.refusal(for: path, force: spec.force, writableHint: settings.writableHint) {
            if spec.path == nil { self.downloads.finished(path: path) }
            throw DownloadRefusal(refusal.hasSuffix("(--force replaces it)") ? 409 : 400, refusal)
        }
        guard spec.path == nil || self.downloads.claim(path) else {
            throw DownloadRefusal(409, "another download is already making \(path)")
        }
        // A partial file left by an earlier download of this path is of unknown origin: the
        // task empties it on its lane (a large one takes the disk a while); one it could not
        // open is refused now.
        if let error = PartialFile.unusable(path + ".afpart") {
            self.downloads.finished(path: path)
            throw DownloadRefusal(400, error.description)
        }
        var spec = spec
        spec.sha256 = spec.sha256?.lowercased()
        // A download a hold rule catches is created suspended, as a restored suspended one is.
        let heldBy = self.holds.catchTask(HoldFacts(download: spec.url))
        let task = self.register(.download) { id in
            DownloadTask(
                id: id, spec: spec, path: path, namedByAnswer: namedByAnswer, createdAt: Date(),
                machine: DownloadStateMachine(
                    policy: settings.policy, keepPartial: spec.keepPartial, state: heldBy == nil ? .running : .suspended
                ),
                manager: self, downloads: self.downloads, heldBy: heldBy, discardsPartial: true)
        }
        self.downloads.journal?.update(task.entry())
        if spec.insecure {
            self.logger?.warning(
                "task \(task.id): download of \(spec.url) with TLS verification off (--insecure), asked by \(spec.client)"
            )
        }
        self.events.publish(.created, task.record())
        if heldBy != nil { self.events.publish(.held, task.record()) }
        if self.networkIsDown && !task.isLoopback { task.networkLost() }
        task.start()
        return task.record()
    }

    /// Brings back the downloads of the journal a previous run left: unfinished ones as live
    /// tasks with their ids (a running one continues at its partial file's length, a suspended
    /// one stays suspended), finished ones into the history. New ids continue after the highest.
    /// Answers how many were restored live.
    package func restoreDownloads() throws(FileError) -> Int {
        guard let journal = self.downloads.journal else { return 0 }
        let entries = try journal.load()
        let settings = self.downloads.settings
        var restored: [DownloadTask] = []
        self.registry.withLock { registry in
            for entry in entries {
                registry.nextID = max(registry.nextID, entry.id + 1)
                guard entry.state != .completed else {
                    registry.history.append(entry.record(maxAttempts: settings.retries))
                    continue
                }
                let partialPath = entry.partialPath ?? entry.path + ".afpart"
                let offset = PartialFile.length(of: partialPath) ?? 0
                let machine = DownloadStateMachine(
                    policy: settings.policy, keepPartial: entry.keepPartial, state: entry.state, offset: offset,
                    total: entry.total, validator: entry.validator, failuresInARow: entry.failuresInARow,
                    resumes: entry.resumes, restarts: entry.restarts)
                let spec = DownloadSpec(
                    url: entry.url, headers: entry.headers, path: entry.path, sha256: entry.sha256,
                    keepPartial: entry.keepPartial, pins: entry.pins, insecure: entry.insecure ?? false,
                    client: "restored")
                let task = DownloadTask(
                    id: entry.id, spec: spec, path: entry.path, partialPath: partialPath,
                    namedByAnswer: entry.namedByAnswer ?? false, createdAt: entry.createdAt, machine: machine,
                    manager: self, downloads: self.downloads, heldBy: entry.state == .suspended ? entry.heldBy : nil)
                _ = self.downloads.claim(entry.path)
                registry.live[task.id] = task
                restored.append(task)
            }
        }
        for task in restored {
            if self.networkIsDown && !task.isLoopback { task.networkLost() }
            task.start()
        }
        return restored.count
    }
}

extension SessionManager {
    /// The `sha256//…` pin of the key `host:port` presents now, verified with the policy in
    /// force. Blocks for the handshake: call it off any event loop.
    package func probePin(host: String, port: Int) -> Result<String, TaskFailure> {
        let caFile = self.downloads.security.withLock { $0.caFile }
        return PinProbe.pin(
            host: host, port: port, caFile: caFile, connectTimeout: self.session.configuration.connectTimeout)
    }

    /// A reload's security policy: new TLS connections of download tasks use it.
    package func updateSecurityPolicy(_ policy: SecurityPolicy) {
        self.downloads.security.withLock { $0 = policy }
    }

    /// The daemon stops: download tasks are not canceled but kept as they are in the journal,
    /// written to disk before this returns, to continue at the next start.
    package func parkDownloads() {
        self.downloads.park()
        guard let journal = self.downloads.journal else { return }
        let live = self.registry.withLock { Array($0.live.values) }
        for case let task as DownloadTask in live { journal.update(task.entry()) }
        journal.flush()
    }

    /// Live tasks other than downloads: what a stop waits for (downloads are parked instead).
    package var liveProxiedCount: Int {
        self.registry.withLock { $0.live.values.filter { $0.kind != .download }.count }
    }
}

extension SessionManager {
    /// The path of a download not given one: the URL's file name in the download directory
    /// (claimed here), or, for a URL that names none, `download`, `download-2`, … (the first
    /// free one) until the answer names it. The directory is made if it is missing.
    fileprivate func provisionalPath(
        _ name: String?, in directory: String
    ) throws(DownloadRefusal)
        -> String
    {
        do throws(FileError) {
            try Files.makeDirectory(directory)
        } catch {
            throw DownloadRefusal(400, error.description)
        }
        if let name {
            let path = directory + "/" + name
            guard self.downloads.claim(path) else {
                throw DownloadRefusal(409, "another download is already making \(path)")
            }
            return path
        }
        for index in 1...1000 {
            let path = directory + (index == 1 ? "/download" : "/download-\(index)")
            guard PartialFile.length(of: path) == nil, PartialFile.length(of: path + ".afpart") == nil,
                self.downloads.claim(path)
            else { continue }
            return path
        }
        throw DownloadRefusal(409, "no free name for a download in \(directory)")
    }
}

extension DownloadEntry {
    /// A finished download's record, as the history shows it after a restart.
    func record(maxAttempts: Int) -> TaskRecord {
        var record = TaskRecord(
            id: self.id, kind: .download, state: .completed, method: "GET", url: self.url, client: "restored",
            createdAt: self.createdAt, status: self.status, error: self.error, errorCode: self.errorCode,
            upload: TransferProgress(completed: 0, total: 0),
            download: TransferProgress(completed: self.offset, total: self.total), requestHeaders: self.headers,
            responseHeaders: self.responseHeaders, resumes: self.resumes)
        record.file = DownloadFile(
            path: self.path, sha256: self.sha256, keepPartial: self.keepPartial,
            attempt: min(self.failuresInARow + 1, maxAttempts), maxAttempts: maxAttempts, lastError: self.lastError,
            restarts: self.restarts, insecure: self.insecure ?? false, pins: self.pins)
        return record
    }
}

/// The file name a URL gives a download without `-o`.
enum DownloadURL {
    /// The last path segment, percent-decoded, or `.some(nil)` when the path names none; nil
    /// when the URL is not http(s) with a host.
    static func fileName(of url: String) -> String?? {
        let lower = url.lowercased()
        guard let scheme = ["http://", "https://"].first(where: { lower.hasPrefix($0) }) else { return nil }
        let rest = url.dropFirst(scheme.count)
        guard !url.utf8.contains(where: { $0 <= 0x20 || $0 == 0x7F }) else { return nil }
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? rest.endIndex
        guard authorityEnd > rest.startIndex else { return nil }
        var path = rest[authorityEnd...]
        if let end = path.firstIndex(where: { $0 == "?" || $0 == "#" }) { path = path[..<end] }
        let segment = path.split(separator: "/", omittingEmptySubsequences: false).last.map(String.init) ?? ""
        let decoded = PercentDecoding.decode(segment)
        guard !decoded.isEmpty, decoded != ".", decoded != "..", !decoded.contains("/"), !decoded.contains("\0")
        else { return .some(nil) }
        return .some(decoded)
    }

}

extension UInt8 {
    fileprivate var isHexDigit: Bool {
        (0x30...0x39).contains(self) || (0x41...0x46).contains(self) || (0x61...0x66).contains(self)
    }
}
