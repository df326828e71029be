public import SceneSyncCore

/// The answer to `set`, `push` and `pop`: the scene's version after the change and the global revision.
///
/// The version is what the next compare-and-set (`ifVersion`) must name. A change that left the path as it was is
/// not a change: the version and revision are then the current ones.
public struct ChangeResult: Sendable, Equatable {
    /// The scene that changed.
    public var scene: SceneID
    /// The scene's version now: what the next `ifVersion` must name.
    public var version: UInt64
    /// The global revision after the change.
    public var revision: UInt64

    /// A result with these values, for tests and for code that fakes the daemon.
    public init(scene: SceneID, version: UInt64, revision: UInt64) {
        self.scene = scene
        self.version = version
        self.revision = revision
    }

    /// Decodes a `set`, `push` or `pop` response.
    public init(response: JSONValue) throws(SceneSyncConnectionError) {
        let what = "change response"
        self.init(
            scene: try response.sceneID("scene", in: what), version: try response.uint("version", in: what),
            revision: try response.uint("revision", in: what))
    }
}
