public import SceneSyncCore

/// A change in the scenes directory, reduced to what the daemon acts on.
///
/// The kernel reports far more than this (temp files, opens, subdirectories); filtering here keeps the daemon's owner
/// loop from waking for names §3 says to ignore, and gives it one vocabulary whatever the kernel mask was.
public enum SceneDirectoryEvent: Sendable, Equatable {
    /// `<ID>.json` was closed after writing or renamed into the directory: its content may have changed.
    case changed(SceneID)
    /// `<ID>.json` was deleted or renamed out of the directory.
    case removed(SceneID)
    /// `<ID>.json` was written to in place and is still open: its content is not final until `.changed` (§3).
    case modified(SceneID)
    /// A file whose name starts with `.scenesync-` was written or renamed into place; the payload is its name.
    ///
    /// Markers let a writer learn when the daemon has seen everything written before the marker (sync cookies), and
    /// let tests provoke behaviour without sleeping.
    case marker(String)
    /// The kernel dropped events (`IN_Q_OVERFLOW`), or a test asked for the same treatment: rescan everything.
    case overflow
    /// The watched directory was deleted, moved or unmounted; the stream ends after this event.
    case directoryGone
}

extension SceneDirectoryEvent: CustomStringConvertible {
    public var description: String {
        switch self {
        case .changed(let id): "changed(\(id))"
        case .removed(let id): "removed(\(id))"
        case .modified(let id): "modified(\(id))"
        case .marker(let name): "marker(\(name))"
        case .overflow: "overflow"
        case .directoryGone: "directoryGone"
        }
    }
}
