import SceneSyncCore

/// A scene ID the test spells out; a typo in a test is its bug, so it stops the run.
func scene(_ id: String) -> SceneID {
    guard let scene = SceneID(id) else { fatalError("invalid scene ID in a test: \(id)") }
    return scene
}
