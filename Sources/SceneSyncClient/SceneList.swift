public import SceneSyncCore

/// The answer to `list`: a summary of every scene, without paths, so that listing stays cheap however deep the
/// stacks are.
public struct SceneList: Sendable, Equatable {
    /// One scene of the list.
    public struct Entry: Sendable, Equatable {
        /// The scene's ID.
        public var scene: SceneID
        /// 1 on creation, +1 per change.
        public var version: UInt64
        /// The revision that last changed it.
        public var modified: UInt64
        /// How many elements its path has.
        public var depth: Int

        /// An entry with these values, for tests.
        public init(scene: SceneID, version: UInt64, modified: UInt64, depth: Int) {
            self.scene = scene
            self.version = version
            self.modified = modified
            self.depth = depth
        }
    }

    /// The daemon's clock when it answered: the list is exactly the state at this revision.
    public var clock: Clock
    /// Sorted by scene ID, as the daemon sends them.
    public var scenes: [Entry]

    /// A list with these values, for tests.
    public init(clock: Clock, scenes: [Entry]) {
        self.clock = clock
        self.scenes = scenes
    }

    /// Decodes a `list` response.
    public init(response: JSONValue) throws(SceneSyncConnectionError) {
        let what = "list response"
        guard let array = response["scenes"]?.arrayValue else { throw .protocolViolation("\(what) has no scenes") }
        var scenes: [Entry] = []
        scenes.reserveCapacity(array.count)
        for item in array {
            scenes.append(
                Entry(
                    scene: try item.sceneID("scene", in: what), version: try item.uint("version", in: what),
                    modified: try item.uint("modified", in: what), depth: try item.int("depth", in: what)))
        }
        self.init(clock: try response.clock(in: what), scenes: scenes)
    }
}
