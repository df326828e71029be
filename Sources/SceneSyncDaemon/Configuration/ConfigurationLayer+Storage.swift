extension ConfigurationLayer {
    /// What one source sets of the `state`, `snapshots` and `history` sections, mirroring
    /// ``DaemonConfiguration/Storage`` so that they are applied in one place.
    struct Storage: Sendable, Equatable {
        var stateDirectory: String?
        var snapshotsKeep: Int?
        var historyMaxRevisions: Int?

        /// `section` with every value this source sets.
        func applied(to section: DaemonConfiguration.Storage) -> DaemonConfiguration.Storage {
            var result = section
            result.stateDirectory = stateDirectory ?? result.stateDirectory
            result.snapshotsKeep = snapshotsKeep ?? result.snapshotsKeep
            result.historyMaxRevisions = historyMaxRevisions ?? result.historyMaxRevisions
            return result
        }
    }
}
