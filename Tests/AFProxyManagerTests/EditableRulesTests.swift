import AFProxyModel
import AFProxyRules
import AFProxyTestSupport
import FoundationEssentials
import Testing

@testable import AFProxyManager

/// The rule book's one list of the kinds a person edits at runtime, and a kind edited through it
/// with its type erased: the same rules, lock and state file as the kind's own code uses.
@Suite struct EditableRulesTests {
    private func json(_ text: String) -> Data { Data(text.utf8) }

    private func encoded(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    @Test func theBookListsItsEditableKinds() {
        let book = RuleBook()
        #expect(book.editable.map(\.kind) == ["holds", "records", "map-remote", "map-local"])
        #expect(book.editable[0] as AnyObject === book.holds)
        #expect(book.editable[1] as AnyObject === book.records)
        #expect(book.editable[2] as AnyObject === book.mapRemote)
        #expect(book.editable[3] as AnyObject === book.mapLocal)
    }

    @Test func anEditThroughTheListIsAnEditOfTheKind() throws {
        let book = RuleBook()
        let holds = book.editable[0]
        let added = try holds.add(json: self.json(#"{"kind": "stream", "once": true}"#), readingAs: .daemon)
        #expect(added.id == 1)
        #expect(book.holds.all.map(\.conditions.kind) == [.stream])
        #expect(book.holds.isActive)
        #expect(try self.encoded(added) == self.encoded(book.holds.all[0]))
        #expect(try holds.listed.map { try self.encoded($0) } == book.holds.all.map { try self.encoded($0) })
        #expect(holds.remove(id: 7) == nil)
        #expect(holds.remove(id: 1)?.id == 1)
        #expect(!book.holds.isActive)
    }

    @Test func aBodyItCannotReadOrARuleItRefusesIsSaidAndChangesNothing() {
        let holds = RuleBook().editable[0]
        #expect(throws: RuleRequestError.expected(fields: HoldRuleSet.requestFields)) {
            try holds.add(json: self.json("[1]"), readingAs: .daemon)
        }
        #expect(throws: RuleRequestError.expected(fields: HoldRuleSet.requestFields)) {
            try holds.add(json: self.json(#"{"once": "yes"}"#), readingAs: .daemon)
        }
        #expect(throws: RuleRequestError.self) { try holds.add(json: self.json(#"{"url": "("}"#), readingAs: .daemon) }
        #expect(holds.listed.isEmpty)
    }

    /// A second kind is made live the same way and edited with no code of its own.
    @Test func anyKindThatConformsIsEditedTheSameWay() throws {
        let labels: any EditableRules = LiveRules(LabelRuleSet())
        #expect(labels.kind == "labels" && labels.requestFields == ["label"])
        #expect(try labels.add(json: self.json(#"{"label": "a"}"#), readingAs: .daemon).id == 1)
        #expect(throws: RuleRequestError("label: expected some text")) {
            try labels.add(json: self.json(#"{"label": ""}"#), readingAs: .daemon)
        }
        #expect(throws: RuleRequestError.expected(fields: ["label"])) {
            try labels.add(json: self.json("{}"), readingAs: .daemon)
        }
        #expect(labels.listed.map(\.id) == [1])
    }

    @Test func theEditableKindsFilesAreAmongTheStateFilesAndKeepTheirEdits() throws {
        let scratch = TemporaryDirectory("editable")
        let first = RuleBook(stateDirectory: scratch.path)
        #expect(
            Set(first.stateFiles.map(\.name)) == [
                "throttle.json", "intercept.json", "holds.json", "records.json", "map-remote.json", "map-local.json",
            ])
        #expect(
            first.editable.compactMap(\.stateFile?.name) == [
                "holds.json", "records.json", "map-remote.json", "map-local.json",
            ])
        _ = try first.editable[0].add(json: self.json(#"{"host": "example.org"}"#), readingAs: .daemon)
        for file in first.stateFiles { file.flush() }

        let second = RuleBook(stateDirectory: scratch.path)
        #expect(second.holds.all.map(\.conditions.summary) == ["host=example.org"])
        #expect(try second.editable[0].add(json: self.json(#"{"all": true}"#), readingAs: .daemon).id == 2)
        // Written before the directory goes: a write after it made it again, left in /tmp.
        for file in second.stateFiles { file.flush() }
        withExtendedLifetime(scratch) {}
    }
}
