import AFProxyModel
import AFProxyStore
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite struct HoldStoreTests {
    @Test func theRulesAndTheNextIDSurviveARestart() throws {
        let directory = temporaryDirectory() + "/state"
        let store = HoldStore(directory: directory)
        #expect(try store.load() == HoldRuleSet())
        var rules = HoldRuleSet()
        _ = rules.add(try HoldConditions(host: "*.example.org", method: nil, url: nil, kind: nil, all: false))
        let removed = rules.add(
            try HoldConditions(host: nil, method: nil, url: "/x$", kind: nil, all: false), once: true)
        _ = rules.remove(id: removed.id)
        store.save(rules)
        store.flush()
        #expect(store.lastError == nil)
        let again = try HoldStore(directory: directory).load()
        #expect(again == rules)
        #expect(again.nextID == 3)
    }

    @Test func anUnreadableFileIsKeptAsideAndSaysSo() throws {
        let directory = temporaryDirectory()
        let path = directory + "/holds.json"
        let file = fopen(path, "w")!
        fputs(#"{"rules":[{"id":1,"kind":"tunnel"}]}"#, file)
        fclose(file)
        #expect(throws: FileError.self) { try HoldStore(directory: directory).load() }
        #expect(access(path + ".unreadable", F_OK) == 0)
        #expect(try HoldStore(directory: directory).load() == HoldRuleSet())
    }
}
