import Testing

@testable import SceneSyncCore

/// Names read on every start and file event: ASCII taken at once, other UTF-8 validated, anything else refused.
@Suite struct UTF8TextTests {
    @Test func asciiAndOtherUTF8AreTakenInvalidBytesAreRefused() {
        #expect(UTF8Text.string(Array("scene-1.json".utf8)[...]) == "scene-1.json")
        #expect(UTF8Text.string(Array("café 🎈".utf8)[...]) == "café 🎈")
        #expect(UTF8Text.string([0x61, 0xFF, 0x62][...]) == nil)
        #expect(UTF8Text.string([0xC3][...]) == nil)
        #expect(UTF8Text.string([][...]) == "")
        let bytes: [UInt8] = Array("window".utf8) + [0xED, 0xA0, 0x80]
        bytes.withUnsafeBytes { raw in
            #expect(UTF8Text.string(UnsafeRawBufferPointer(rebasing: raw.prefix(6))) == "window")
            #expect(UTF8Text.string(raw) == nil)
        }
    }
}
