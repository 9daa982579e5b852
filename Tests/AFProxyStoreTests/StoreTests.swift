import AFProxyModel
import AFProxyStore
import AFProxyTestSupport
import FoundationEssentials
import Testing

#if canImport(Glibc)
import Glibc
#endif

func contents(_ path: String) -> [UInt8]? {
    guard let file = fopen(path, "rb") else { return nil }
    defer { fclose(file) }
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    while case let count = fread(&buffer, 1, buffer.count, file), count > 0 { bytes += buffer[0..<count] }
    return bytes
}

@Suite struct PartialFileTests {
    @Test func bytesGoToThePartialFileAndTheTargetAppearsOnlyComplete() throws {
        let scratch = TemporaryDirectory("store")
        let directory = scratch.path
        let file = PartialFile(target: directory + "/f.bin")
        #expect(try file.open() == 0)
        try Array("hello ".utf8).withUnsafeBytes { try file.write($0, at: 0) }
        try Array("world".utf8).withUnsafeBytes { try file.write($0, at: 6) }
        #expect(contents(directory + "/f.bin") == nil)
        // SHA-256 of "hello world".
        try file.finish(length: 11, sha256: "B94D27B9934D3E08A52E52D7DA7DABFAC484EFE37A5380EE9088F7ACE2EFCDE9")
        #expect(contents(directory + "/f.bin") == Array("hello world".utf8))
        #expect(contents(directory + "/f.bin.afpart") == nil)
    }

    @Test func aWrongLengthOrChecksumLeavesTheTargetUnmade() throws {
        let scratch = TemporaryDirectory("store")
        let directory = scratch.path
        let file = PartialFile(target: directory + "/f.bin")
        try Array("abc".utf8).withUnsafeBytes { try file.write($0, at: 0) }
        #expect(throws: TaskFailure.lengthMismatch("the file has 3 bytes where the origin announced 4")) {
            try file.finish(length: 4, sha256: nil)
        }
        #expect {
            try file.finish(length: 3, sha256: String(repeating: "0", count: 64))
        } throws: { ($0 as? TaskFailure)?.code == "checksum-mismatch" }
        #expect(contents(directory + "/f.bin") == nil)
        file.remove()
        #expect(contents(directory + "/f.bin.afpart") == nil)
    }

    @Test func truncateStartsTheFileAgainAndOpenTellsTheLengthAfterACrash() throws {
        let scratch = TemporaryDirectory("store")
        let directory = scratch.path
        let first = PartialFile(target: directory + "/f")
        try Array(repeating: UInt8(7), count: 1000).withUnsafeBytes { try first.write($0, at: 0) }
        first.close()
        let again = PartialFile(target: directory + "/f")
        #expect(try again.open() == 1000)
        try again.truncate()
        #expect(try again.open() == 0)
    }

    @Test func aFileSystemWithoutRoomIsDiskFull() throws {
        #expect(FileError(operation: "write", path: "/x", code: ENOSPC).isNoSpace)
        #expect(FileError(operation: "write", path: "/x", code: EFBIG).isNoSpace)
        #expect(!FileError(operation: "write", path: "/x", code: EIO).isNoSpace)
        #expect {
            try PartialFile.failure { () throws(FileError) in
                throw FileError(operation: "write", path: "/x", code: ENOSPC)
            }
        } throws: { ($0 as? TaskFailure)?.code == "disk-full" }
    }
}

@Suite struct DownloadJournalTests {
    func entry(_ id: Int, state: TaskState = .running) -> DownloadEntry {
        DownloadEntry(
            id: id, url: "http://o/\(id)", headers: [HTTPHeaderField("X-A", "1")], path: "/d/\(id)", sha256: nil,
            keepPartial: false, createdAt: Date(timeIntervalSince1970: 1_800_000_000), state: state,
            validator: .entityTag(#""e""#), total: 10, offset: 4,
            resumes: [TaskResume(offset: 4, at: Date(timeIntervalSince1970: 1_800_000_001))])
    }

    @Test func whatIsWrittenReadsBackInANewJournal() throws {
        let scratch = TemporaryDirectory("store")
        let directory = scratch.path + "/state/nested"
        let journal = DownloadJournal(directory: directory)
        #expect(try journal.load() == [])
        journal.update(self.entry(2))
        journal.update(self.entry(1, state: .suspended))
        journal.flush()
        #expect(try DownloadJournal(directory: directory).load() == [self.entry(1, state: .suspended), self.entry(2)])
        #expect(contents(directory + "/downloads.json.tmp") == nil)
    }

    @Test func onlyTheNewestCompletedEntriesAreKept() throws {
        let scratch = TemporaryDirectory("store")
        let directory = scratch.path
        let journal = DownloadJournal(directory: directory, completedLimit: 2)
        for id in 1...4 { journal.update(self.entry(id, state: .completed)) }
        journal.update(self.entry(5))
        journal.flush()
        #expect(try DownloadJournal(directory: directory).load().map(\.id) == [3, 4, 5])
    }

    @Test func anUnreadableJournalIsKeptAsideNotOverwritten() throws {
        let scratch = TemporaryDirectory("store")
        let directory = scratch.path
        let file = fopen(directory + "/downloads.json", "w")!
        fputs("{not json", file)
        fclose(file)
        let journal = DownloadJournal(directory: directory)
        #expect(try journal.load() == [])
        #expect(contents(directory + "/downloads.json.unreadable") == Array("{not json".utf8))
        #expect(journal.problem?.hasSuffix("kept as downloads.json.unreadable") == true)
    }
}

@Suite struct DownloadTargetTests {
    @Test func refusesWhatTheDaemonCannotMakeAndSaysWhy() throws {
        let scratch = TemporaryDirectory("store")
        let directory = scratch.path
        #expect(DownloadTarget.refusal(for: directory + "/new", force: false, writableHint: nil) == nil)
        #expect(
            DownloadTarget.refusal(for: "relative/x", force: false, writableHint: nil)?.contains("absolute") == true)
        #expect(
            DownloadTarget.refusal(for: directory + "/missing/x", force: false, writableHint: nil)?.contains(
                "No such file") == true)
        let existing = directory + "/there"
        fclose(fopen(existing, "w"))
        #expect(
            DownloadTarget.refusal(for: existing, force: false, writableHint: nil)
                == "\(existing) exists (--force replaces it)")
        #expect(DownloadTarget.refusal(for: existing, force: true, writableHint: nil) == nil)
        #expect(DownloadTarget.refusal(for: directory, force: true, writableHint: nil) == "\(directory) is a directory")
        #expect(
            DownloadTarget.refusal(for: existing + "/x", force: false, writableHint: nil)
                == "\(existing) is not a directory")
    }
}
