import AFProxyModel
import AFProxyRules
import AFProxyStore
import AFProxyTestSupport
import Dispatch
import FoundationEssentials
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite struct StateFileTests {
    func write(_ text: String, to path: String) {
        let file = fopen(path, "w")!
        fputs(text, file)
        fclose(file)
    }

    func text(_ path: String) -> String? {
        contents(path).map { String(decoding: $0, as: UTF8.self) }
    }

    @Test func holdRulesAndTheNextIDSurviveARestart() throws {
        let scratch = TemporaryDirectory("store")
        let directory = scratch.path + "/state"
        let file = StateFiles.file(for: HoldRuleSet.self, directory: directory)!
        #expect(file.load() == nil)
        var rules = HoldRuleSet()
        _ = rules.add(try HoldConditions(host: "*.example.org", method: nil, url: nil, kind: nil, all: false))
        let removed = rules.add(
            try HoldConditions(host: nil, method: nil, url: "/x$", kind: nil, all: false), once: true)
        _ = rules.remove(id: removed.id)
        file.save(rules)
        file.flush()
        #expect(file.problem == nil)
        let again = StateFiles.file(for: HoldRuleSet.self, directory: directory)!.load()
        #expect(again == rules)
        #expect(again?.nextID == 3)
    }

    @Test func everyFileIsWrittenSortedIndentedWithSlashesAsTheyAre() throws {
        let scratch = TemporaryDirectory("store")
        let directory = scratch.path
        let file = StateFiles.file(for: ThrottleRuleSet.self, directory: directory)!
        let rule = ThrottleRule(
            scope: .host(try HostPattern("10.0.0.0/8")), down: ByteRate(bytesPerSecond: 1000), up: nil)
        file.save(SavedThrottleRules(rules: [rule], lifted: [.global]))
        file.flush()
        let written = try #require(self.text(directory + "/throttle.json"))
        #expect(written.contains("10.0.0.0/8") && !written.contains("\\/"))
        #expect(written.contains("\n  \"lifted\" : ["))
        #expect(written.firstRange(of: "\"lifted\"")!.lowerBound < written.firstRange(of: "\"rules\"")!.lowerBound)
        #expect(StateFiles.file(for: ThrottleRuleSet.self, directory: directory)!.load()?.rules == [rule])
    }

    @Test func theLastSaveBeforeTheWriteWins() {
        let scratch = TemporaryDirectory("store")
        let directory = scratch.path
        let file = StateFile<[Int]>(directory: directory, name: "n.json")
        for n in 1...50 { file.save(Array(0..<n)) }
        file.flush()
        #expect(StateFile<[Int]>(directory: directory, name: "n.json").load() == Array(0..<50))
    }

    @Test func aSaveDoesNotWaitForTheWriter() {
        let scratch = TemporaryDirectory("store")
        let directory = scratch.path
        let file = StateFile<[Int]>(directory: directory, name: "n.json")
        let writerBusy = DispatchSemaphore(value: 0)
        StateFiles.lane.submit { writerBusy.wait() }
        file.save([1])  // returns although the writer is held up: it only queued the write
        #expect(contents(directory + "/n.json") == nil)
        writerBusy.signal()
        file.flush()
        #expect(file.load() == [1])
    }

    @Test func anUnreadableFileIsKeptAsideReportedAndTheStartIsEmpty() {
        let scratch = TemporaryDirectory("store")
        let directory = scratch.path
        let path = directory + "/holds.json"
        self.write(#"{"rules":[{"id":1,"kind":"tunnel"}]}"#, to: path)
        let file = StateFiles.file(for: HoldRuleSet.self, directory: directory)!
        #expect(file.load() == nil)
        #expect(self.text(path + ".unreadable") == #"{"rules":[{"id":1,"kind":"tunnel"}]}"#)
        #expect(access(path, F_OK) != 0)
        #expect(file.problem?.hasPrefix("unreadable at start") == true)
        #expect(file.problem?.hasSuffix("kept as holds.json.unreadable") == true)
        // What is in force is written at the next change, and the file is as it should be again.
        file.save(HoldRuleSet())
        file.flush()
        #expect(file.problem == nil)
        #expect(StateFiles.file(for: HoldRuleSet.self, directory: directory)!.load() == HoldRuleSet())
    }

    @Test func aFileThatCannotBeOpenedIsKeptAsideToo() {
        let scratch = TemporaryDirectory("store")
        let directory = scratch.path
        mkdir(directory + "/throttle.json", 0o700)  // read(2) of a directory fails, even as root
        let file = StateFiles.file(for: ThrottleRuleSet.self, directory: directory)!
        #expect(file.load() == nil)
        #expect(access(directory + "/throttle.json.unreadable", F_OK) == 0)
        #expect(file.problem?.contains("Is a directory") == true)
    }

    /// Root ignores mode bits, so the file's path is made a directory the rename cannot replace.
    @Test func aFailedWriteIsReportedUntilALaterWriteSucceeds() throws {
        let scratch = TemporaryDirectory("store")
        let directory = scratch.path
        let path = directory + "/throttle.json"
        let file = StateFiles.file(for: ThrottleRuleSet.self, directory: directory)!
        file.save(SavedThrottleRules(lifted: [.global]))
        file.flush()
        #expect(file.problem == nil)
        unlink(path)
        mkdir(path, 0o700)
        self.write("x", to: path + "/inside")
        file.save(SavedThrottleRules())
        file.flush()
        let problem = try #require(file.problem)
        #expect(problem.hasPrefix("write failed: cannot rename \(path).tmp"), "\(problem)")
        #expect(problem.hasSuffix("Is a directory"), "\(problem)")
        #expect(StateFiles.problems([file]) == ["throttle.json": problem])

        unlink(path + "/inside")
        rmdir(path)
        file.save(SavedThrottleRules(lifted: [.global]))
        file.flush()
        #expect(file.problem == nil)
        #expect(StateFiles.problems([file]) == nil)
        #expect(file.load() == SavedThrottleRules(lifted: [.global]))
    }

    @Test func aStateDirectoryThatIsAFileIsAFailedWrite() {
        let scratch = TemporaryDirectory("store")
        let parent = scratch.path
        self.write("not a directory", to: parent + "/state")
        let file = StateFile<[Int]>(directory: parent + "/state", name: "n.json")
        file.save([1])
        file.flush()
        #expect(file.problem?.contains("cannot create the directory \(parent)/state: File exists") == true)
    }
}
