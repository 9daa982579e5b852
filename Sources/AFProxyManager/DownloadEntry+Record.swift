import AFProxyModel
import AFProxyStore

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
