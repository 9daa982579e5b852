import AFProxyModel
import FoundationEssentials
import Testing

/// Whose rights a map-local rule's files are read with: the permission bits as the kernel would
/// apply them to the rule's author, owner class first.
@Suite struct ReadRightsTests {
    private let alice = ReadRights.user(uid: 1000, groups: [1000, 27])

    @Test func theOwnerClassDecidesAloneWhenItApplies() {
        #expect(self.alice.allow(.read, mode: 0o400, owner: 1000, group: 0))
        // An owner without r is refused even where group and other could read.
        #expect(!self.alice.allow(.read, mode: 0o044, owner: 1000, group: 27))
        #expect(self.alice.allow(.search, mode: 0o100, owner: 1000, group: 0))
        #expect(!self.alice.allow(.search, mode: 0o644, owner: 1000, group: 0))
    }

    @Test func theGroupClassThenOther() {
        #expect(self.alice.allow(.read, mode: 0o640, owner: 0, group: 27))
        #expect(!self.alice.allow(.read, mode: 0o604, owner: 0, group: 27))
        #expect(self.alice.allow(.read, mode: 0o604, owner: 0, group: 5))
        #expect(!self.alice.allow(.read, mode: 0o640, owner: 0, group: 5))
        #expect(self.alice.allow(.search, mode: 0o711, owner: 0, group: 0))
        #expect(!self.alice.allow(.search, mode: 0o700, owner: 0, group: 0))
    }

    @Test func theDaemonAndRootReadAnythingAnyoneOnlyWhatOtherMay() {
        #expect(ReadRights.daemon.allow(.read, mode: 0o000, owner: 1, group: 1))
        #expect(ReadRights.user(uid: 0, groups: []).allow(.read, mode: 0o000, owner: 1, group: 1))
        #expect(ReadRights.anyone.allow(.read, mode: 0o644, owner: 0, group: 0))
        #expect(!ReadRights.anyone.allow(.read, mode: 0o640, owner: 0, group: 0))
        #expect(!ReadRights.anyone.allow(.search, mode: 0o750, owner: 0, group: 0))
    }

    @Test func keptAsAWordOrAUser() throws {
        for rights in [ReadRights.daemon, .anyone, self.alice] {
            #expect(try JSONDecoder().decode(ReadRights.self, from: try JSONEncoder().encode(rights)) == rights)
        }
        #expect(String(decoding: try JSONEncoder().encode(ReadRights.anyone), as: UTF8.self) == #""anyone""#)
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(ReadRights.self, from: Data(#""root""#.utf8)) }
    }
}
