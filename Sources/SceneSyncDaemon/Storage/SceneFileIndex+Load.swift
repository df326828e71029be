import SceneSyncCore

extension SceneFileIndex {
    /// The index at `path` if it was written with the snapshot of `epoch` and `revision` under the codec's limits
    /// `codec`; `nil` when it is missing, torn, or of another snapshot or codec (every file is then read).
    static func load(from path: String, epoch: String, revision: UInt64, codec: String) -> SceneFileIndex? {
        guard let bytes = try? FileSystem.read(path, limit: 1 << 30).flatMap({ $0 }),
            let index = decode(bytes), index.epoch == epoch, index.revision == revision, index.codec == codec
        else { return nil }
        return index
    }
}
