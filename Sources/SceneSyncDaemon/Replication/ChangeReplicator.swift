public import SceneSyncCore

/// What the engine needs of replication across hosts (§9), so that the daemon's core knows nothing of the database.
///
/// The engine calls it inside its own turns, so every method must return at once: it may record a change (a local
/// append) and wake a task, but never wait for the database.
public protocol ChangeReplicator: AnyObject, Sendable {
    /// Whether `scene` is shared (`cluster.scenes`).
    func shares(_ scene: SceneID) -> Bool
    /// An accepted change of this host to a shared scene, in revision order, before its answer or event leaves.
    func record(_ change: LocalChange)
    /// Whether a change of this host to `scene` still waits to be pushed: a remote change it supersedes is skipped.
    func hasPending(_ scene: SceneID) -> Bool
    /// The `stats.cluster` object.
    func statsJSON() -> [UInt8]
    /// Returns once every change recorded so far would be found again after a crash of the daemon (SIGKILL).
    ///
    /// ``record(_:)`` may only queue what it records, so a crash can lose a change that was answered. The next
    /// start still finds it, as a scene file that differs from the restored snapshot, and records it again; or,
    /// when the file equals the snapshot, through ``reconcile(holding:)``; unless a snapshot written after the
    /// change holds it. The engine awaits this between taking a snapshot's state and writing it, so that every
    /// change the snapshot holds is recorded durably first. It never waits for the database, nor for a record that
    /// cannot be made durable now (a full disk): it returns, and the snapshot goes on without that guarantee.
    func persistRecords() async
    /// Once, after the start-up merge: every shared scene this host holds, with its file's bytes and format (a
    /// shared scene missing from `scenes` is absent). The replicator records, as changes of origin `file`, those
    /// whose record a crash took although their file equals the restored snapshot, which the merge cannot see.
    func reconcile(holding scenes: [SceneID: (bytes: [UInt8], format: SceneFormat)])
    /// The shared scenes whose last state this host held, as the replicator last saw it, is a deletion: this
    /// host's own, or another host's it applied. At start, the file of such a scene is missing because of that
    /// deletion, made after the restored snapshot, which still has the scene: writing it back
    /// (`scenes.restore_missing`) would undo the deletion in the whole cluster.
    func scenesHeldDeleted() -> Set<SceneID>
}

extension ChangeReplicator {
    /// A replicator that records synchronously has nothing to wait for.
    public func persistRecords() async {}
    /// A replicator that records synchronously has lost no record.
    public func reconcile(holding scenes: [SceneID: (bytes: [UInt8], format: SceneFormat)]) {}
    /// A replicator that records synchronously has lost no record.
    public func scenesHeldDeleted() -> Set<SceneID> { [] }
}

/// One accepted change of this host, as the cluster needs it: the record and the scene file's bytes after it.
public struct LocalChange: Sendable {
    public var record: ChangeRecord
    /// What the scene file holds after the change; `nil` for a deletion.
    public var fileBytes: [UInt8]?

    public init(record: ChangeRecord, fileBytes: [UInt8]?) {
        self.record = record
        self.fileBytes = fileBytes
    }
}

/// Another host's change, as the replicator hands it to the engine.
public struct RemoteChange: Sendable {
    public var scene: SceneID
    /// The origin host's scene file bytes; `nil` for a deletion.
    public var fileBytes: [UInt8]?
    public var format: SceneFormat?
    /// `remote`, with the origin host's name and its own client fields.
    public var origin: Origin
    public var conflict: Conflict?

    public init(scene: SceneID, fileBytes: [UInt8]?, format: SceneFormat?, origin: Origin, conflict: Conflict?) {
        self.scene = scene
        self.fileBytes = fileBytes
        self.format = format
        self.origin = origin
        self.conflict = conflict
    }
}

/// What became of a ``RemoteChange``.
public enum RemoteOutcome: Sendable, Equatable {
    /// Written to the scene file and committed as a change of origin `remote`.
    case applied
    /// This host's scene already holds that state.
    case unchanged
    /// A change of this host to the scene waits to be pushed and will commit after it (§9).
    case superseded
    /// Not applied: this host's limits or format policy reject it, or its file cannot be written.
    case refused(String)
    /// The daemon is shutting down; the change is applied at the next start.
    case stopping
}
