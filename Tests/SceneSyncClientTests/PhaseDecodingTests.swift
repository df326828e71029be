import SceneSyncCore
import Testing

@testable import SceneSyncClient

/// The scene's `phase` member (§6), as the daemon writes it in `get`, `state` events and a conflict's `current`, read
/// into ``SceneState/phase``; one this version does not know reads as none.
@Suite struct PhaseDecodingTests {
    private func json(_ text: String) throws -> JSONValue {
        try JSONParser.parse(Array(text.utf8))
    }

    private func getResponse(phase: String?) -> String {
        #"{"id":1,"ok":true,"scene":"s","version":3,"created":1,"modified":4,"format":"array","path":[{"value":1}]"#
            + (phase.map { #","phase":"# + $0 } ?? "") + #","epoch":"e","revision":4}"#
    }

    @Test(arguments: ScenePhase.allCases)
    func get(phase: ScenePhase) throws {
        let fetched = try FetchedScene(response: json(getResponse(phase: "\"\(phase.rawValue)\"")))
        #expect(fetched.scene.phase == phase)
        #expect(fetched.scene.version == 3)
    }

    @Test func getWithoutAPhase() throws {
        #expect(try FetchedScene(response: json(getResponse(phase: nil))).scene.phase == nil)
    }

    @Test(arguments: [#""suspended""#, "1", "null"])
    func anUnknownPhaseIsNone(phase: String) throws {
        let fetched = try FetchedScene(response: json(getResponse(phase: phase)))
        #expect(fetched.scene.phase == nil)
        #expect(fetched.scene.path == [Element(tag: nil, value: try json("1"))])
    }

    @Test func stateEvent() throws {
        let decoded = try SceneSyncEvent(
            json: json(
                #"{"event":"state","subscription":1,"scene":"s","version":1,"created":1,"modified":1,"format":"array","path":[],"phase":"inactive"}"#
            ))
        guard case .state(let scene) = decoded else {
            Issue.record("not a state: \(decoded)")
            return
        }
        #expect(scene.phase == .inactive)
    }

    @Test func conflictCurrent() throws {
        let error = SceneSyncError.decode(
            try json(
                #"{"code":"conflict","message":"m","current":{"scene":"s","version":2,"created":1,"modified":2,"format":"array","path":[],"phase":"background"}}"#
            ))
        #expect(error.code == .conflict)
        #expect(error.current?.phase == .background)
    }
}
