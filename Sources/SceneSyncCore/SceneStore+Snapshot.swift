extension SceneStore {
    /// The encoder of a snapshot of every scene of the store, at its revision: the scenes are ordered by their
    /// slots, and read from the store's own entries as they are encoded.
    ///
    /// Called on a copy of the store, off the engine: the copy shares the store's entries until the store next
    /// changes, and sorting is the only work here.
    public func snapshotEncoder(time: String, reason: Snapshot.Reason) -> SnapshotEncoder {
        SnapshotEncoder(
            epoch: epoch, revision: revision, time: time, reason: reason,
            scenes: .entries(entries.values, order: slotsInIDOrder()))
    }
}
