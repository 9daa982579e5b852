@testable import AFProxyCLI
import AFProxyModel
import FoundationEssentials
import Testing

@Suite struct FormattingTests {
    private func task(_ kind: TaskKind, status: Int?, upload: TransferProgress, download: TransferProgress) -> TaskRecord {
        TaskRecord(
            id: 1, kind: kind, state: .running, method: "PUT", url: "http://h/", client: "c",
            createdAt: Date(timeIntervalSince1970: 0), status: status, upload: upload, download: download)
    }

    @Test func anUploadOfUnknownLengthShowsItsUploadWhileItSends() {
        // The origin answered before the body ended: the column showed the download bytes.
        let early = self.task(.upload, status: 200, upload: .init(completed: 5_000_000), download: .init(completed: 10))
        #expect(Formatting.mainProgress(early).completed == 5_000_000)
        #expect(Formatting.progress(Formatting.mainProgress(early), terminal: false) == "4.8 MiB")
        let sending = self.task(.upload, status: nil, upload: .init(completed: 700, total: nil), download: .init())
        #expect(Formatting.mainProgress(sending).completed == 700)
    }

    @Test func afterTheBodyEndedTheResponseCounts() {
        let done = self.task(
            .upload, status: 200, upload: .init(completed: 5_000, total: 5_000), download: .init(completed: 10, total: 20))
        #expect(Formatting.progress(Formatting.mainProgress(done), terminal: false) == "50%")
        let data = self.task(.data, status: nil, upload: .init(completed: 0, total: 0), download: .init(completed: 3, total: 4))
        #expect(Formatting.progress(Formatting.mainProgress(data), terminal: false) == "75%")
    }
}
