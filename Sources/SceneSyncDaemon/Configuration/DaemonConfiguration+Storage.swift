extension DaemonConfiguration {
    /// The `state`, `snapshots` and `history` sections: what the daemon keeps of its own on disk, which the scene
    /// files never hold, so that the settings of its state directory travel together.
    public struct Storage: Sendable, Equatable {
        /// `state.directory`
        public var stateDirectory: String
        /// `snapshots.keep`
        public var snapshotsKeep: Int
        /// `history.max_revisions`; 0 keeps no history.
        public var historyMaxRevisions: Int
    }

    // The flat names predate the sections; they stay so that callers need not change.

    /// `state.directory`
    public var stateDirectory: String {
        get { storage.stateDirectory }
        set { storage.stateDirectory = newValue }
    }

    /// `snapshots.keep`
    public var snapshotsKeep: Int {
        get { storage.snapshotsKeep }
        set { storage.snapshotsKeep = newValue }
    }

    /// `history.max_revisions`; 0 keeps no history.
    public var historyMaxRevisions: Int {
        get { storage.historyMaxRevisions }
        set { storage.historyMaxRevisions = newValue }
    }
}
