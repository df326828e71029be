import Testing

@testable import SceneSyncCore

/// A scene on the wire carries `phase` only when one was reported (§6), and a client reads it back.
@Suite("Wire: phases")
struct WirePhaseTests {
    @Test("a scene with a phase ends in its phase member, and decodes to it", arguments: ScenePhase.allCases)
    func scene(phase: ScenePhase) throws {
        var state = try WireTests.arrayScene()
        state.phase = phase
        var out: [UInt8] = []
        Wire.appendScene(state, to: &out)
        let json = try parseJSON(out)
        #expect(json.objectValue?.keys == ["scene", "version", "created", "modified", "format", "path", "phase"])
        #expect(json["phase"] == .string(phase.rawValue))
        #expect(text(out).hasSuffix(#","phase":"\#(phase.rawValue)"}"#))
        let decoded = try Wire.decodeScene(json)
        #expect(decoded.phase == phase)
        #expect(decoded.path == state.path)
    }

    @Test("a scene without a phase has no phase member and decodes to none")
    func noPhase() throws {
        var out: [UInt8] = []
        Wire.appendScene(try WireTests.arrayScene(), to: &out)
        let json = try parseJSON(out)
        #expect(json["phase"] == nil)
        #expect(try Wire.decodeScene(json).phase == nil)
    }

    @Test("a conflict's current scene carries the phase")
    func conflict() throws {
        var state = try WireTests.codableScene()
        state.phase = .inactive
        var out: [UInt8] = []
        Wire.appendError(SceneSyncError(.conflict, "scene main is at version 3", current: state), to: &out)
        let current = try #require(try parseJSON(out)["current"])
        #expect(current["phase"] == .string("inactive"))
        #expect(try Wire.decodeScene(current).phase == .inactive)
    }

    @Test(
        "a phase the client does not know, or one that is no string, reads as none and the scene is kept",
        arguments: [#""hidden""#, "7", "null", #""Active""#])
    func unknownPhase(phase: String) throws {
        let line =
            #"{"scene":"a","version":2,"created":1,"modified":2,"format":"array","path":[{"value":1}],"phase":"#
            + phase + "}"
        let decoded = try Wire.decodeScene(try parseJSON(utf8(line)))
        #expect(decoded.phase == nil)
        #expect(decoded.version == 2)
        #expect(decoded.path == [try untyped("1")])
    }
}
