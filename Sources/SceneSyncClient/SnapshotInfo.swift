public import SceneSyncCore

/// A snapshot the daemon wrote: the answer to `snapshot`, and the `snapshot` member of a `background` phase answer.
public struct SnapshotInfo: Sendable, Equatable {
    /// The snapshot file, absolute.
    public var path: String
    /// The revision it captured.
    public var revision: UInt64
    /// How many scenes it holds.
    public var scenes: Int
    /// Its size in bytes.
    public var bytes: Int

    /// Info with these values, for tests.
    public init(path: String, revision: UInt64, scenes: Int, bytes: Int) {
        self.path = path
        self.revision = revision
        self.scenes = scenes
        self.bytes = bytes
    }

    /// Decodes a `snapshot` response (or the `snapshot` object of a `phase` response).
    public init(response: JSONValue) throws(SceneSyncConnectionError) {
        let what = "snapshot response"
        self.init(
            path: try response.string("path", in: what), revision: try response.uint("revision", in: what),
            scenes: try response.int("scenes", in: what), bytes: try response.int("bytes", in: what))
    }
}
