import SceneSyncClient
import Testing

/// An app imports this library alone, and still names ``ScenePhase``, which lives in SceneSyncCore: this file
/// imports nothing else, so it compiles only while the library re-exports it.
@Suite struct ScenePhaseImportTests {
    @Test func thePhasesAreNamedThroughTheClientLibraryAlone() {
        let phase: ScenePhase = ScenePhase.background
        #expect(ScenePhase(rawValue: "background") == phase)
        #expect(ScenePhase.allCases.map(\.rawValue) == ["active", "inactive", "background"])
    }
}
