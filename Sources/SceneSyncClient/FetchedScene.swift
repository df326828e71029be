public import SceneSyncCore

/// The answer to `get`: one scene and the clock it was read at.
///
/// The clock lets a client that fetched a scene subscribe with `since` and miss nothing in between.
public struct FetchedScene: Sendable, Equatable {
    /// The scene, its path root first.
    public var scene: SceneState
    /// The daemon's clock when it answered: the scene is as of this revision.
    public var clock: Clock

    /// A result with these values, for tests.
    public init(scene: SceneState, clock: Clock) {
        self.scene = scene
        self.clock = clock
    }

    /// Decodes a `get` response.
    public init(response: JSONValue) throws(SceneSyncConnectionError) {
        self.init(scene: try response.scene(in: "get response"), clock: try response.clock(in: "get response"))
    }
}
