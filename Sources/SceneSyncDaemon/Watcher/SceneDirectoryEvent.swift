public import SceneSyncCore

/// What the watcher reports about the scenes directory, in kernel order.
public enum SceneDirectoryEvent: Sendable, Equatable {
    /// `<ID>.json` was closed after writing or renamed into place.
    case changed(SceneID)
    /// `<ID>.json` was deleted or renamed away.
    case removed(SceneID)
    /// A `.scenesync-*` file was written: sync cookies and test hooks.
    case marker(String)
    /// The kernel dropped events: everything must be rescanned.
    case overflow
    /// The watched directory itself was removed or moved.
    case directoryGone
}
