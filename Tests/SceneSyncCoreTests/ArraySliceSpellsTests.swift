import Testing

@testable import SceneSyncCore

@Suite struct ArraySliceSpellsTests {
    @Test func onlyTheExactBytesSpellTheText() {
        let line = Array(#"{"id":1,"op":"set"}"#.utf8)
        #expect(line[2..<4].spells("id"))
        #expect(line[13..<18].spells(#""set""#))
        #expect(!line[2..<4].spells("i"))
        #expect(!line[2..<4].spells("idx"))
        #expect(!line[2..<4].spells("op"))
        #expect(line[0..<0].spells(""))
    }
}
