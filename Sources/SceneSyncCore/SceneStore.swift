/// The versioned state of all scenes (§4): the single place where changes are accepted, numbered and recorded.
///
/// It is a value with no I/O. The daemon's one owner task holds it, so every change is serialized by construction.
/// Client changes go through ``plan(_:on:origin:overwritingUnreadFile:)`` then ``commit(_:)`` so the daemon can write
/// the scene file in between and refuse the change, changing nothing, when the write fails.
public struct SceneStore: Sendable {
    public private(set) var epoch: String
    public private(set) var revision: UInt64
    /// Format policy and limits; replaced on reload.
    public var codec: SceneFileCodec
    public private(set) var history: ChangeHistory

    private(set) var entries = EntryTable()

    /// What the store keeps per scene. Kept small: a daemon may hold a hundred thousand of them.
    struct Entry: Sendable {
        var state: SceneState
        /// Who made the current state, for conflict records; `nil` for the file. The change record's own box when it
        /// holds no conflict: one allocation for both.
        var madeBy: ChangeRecord.Details?
        /// The scene version the file is known to hold (last read from or written to it), 0 when unknown; differs
        /// from `state.version` only while a change has not reached the file.
        var fileVersion: UInt64
        /// Digest of the bytes last read from or written to the file, to notice writes not read yet; 0 when
        /// unknown (a real digest of 0 only costs a comparison of the bytes).
        var knownDigest: UInt64

        init(state: SceneState, origin: Origin, fileVersion: UInt64?, fileDigest: UInt64?) {
            self.init(
                state: state, madeBy: ChangeRecord.Details.make(origin: origin, conflict: nil),
                fileVersion: fileVersion, fileDigest: fileDigest)
        }

        init(state: SceneState, madeBy: ChangeRecord.Details?, fileVersion: UInt64?, fileDigest: UInt64?) {
            self.state = state
            self.madeBy = madeBy
            self.fileVersion = fileVersion ?? 0
            self.knownDigest = fileDigest ?? 0
        }

        var origin: Origin { madeBy?.origin ?? .file }

        var fileDigest: UInt64? {
            get { knownDigest == 0 ? nil : knownDigest }
            set { knownDigest = newValue ?? 0 }
        }
    }

    public init(
        epoch: String, revision: UInt64 = 0, codec: SceneFileCodec = SceneFileCodec(), historyLimit: Int = 10_000
    ) {
        self.epoch = epoch
        self.revision = revision
        self.codec = codec
        self.history = ChangeHistory(limit: historyLimit, startingAt: revision)
    }

    public var clock: Clock { Clock(epoch: epoch, revision: revision) }

    public var count: Int { entries.count }

    public func scene(_ id: SceneID) -> SceneState? { entries[id]?.state }

    /// All scenes, sorted by ID.
    public var scenes: [SceneState] {
        let values = entries.values
        return slotsInIDOrder().map { values[Int($0)].state }
    }

    public var sceneIDs: some Collection<SceneID> { entries.keys }

    /// The scene at `offset` (0..<``count``) in the store's own, unsorted order. Removals move scenes, so walk a
    /// copy that no longer changes (a catch-up walks the store as it was when it began).
    public func scene(atOffset offset: Int) -> SceneState { entries.values[offset].state }

    /// Who made the scene's current state (`.file` for an app's write).
    public func origin(of id: SceneID) -> Origin? { entries[id]?.origin }

    /// The digest of the bytes the daemon last read from or wrote to this scene's file.
    public func fileDigest(_ id: SceneID) -> UInt64? { entries[id]?.fileDigest }

    /// The scenes whose file is known to hold their current state (last read or written, no change since), with
    /// the digest of those bytes: what a snapshot of the store holds is then exactly what each of these files holds.
    public func filesHoldingState() -> [(scene: SceneID, digest: UInt64)] {
        var files: [(scene: SceneID, digest: UInt64)] = []
        files.reserveCapacity(entries.count)
        // By index: walking the entries by value would copy each one, retaining its buffers.
        let values = entries.values
        for slot in values.indices where values[slot].fileVersion == values[slot].state.version {
            if let digest = values[slot].fileDigest { files.append((values[slot].state.id, digest)) }
        }
        return files
    }

    /// The scene's file holds its current state, whose bytes have `digest`: known without reading the file (a
    /// start that finds a file unchanged since the snapshot it restored recorded it).
    public mutating func noteFileHoldsState(_ id: SceneID, digest: UInt64) {
        // In place: a restart notes this for every unchanged file, and a copy of each entry retained its buffers.
        entries.modify(id) { entry in
            entry.fileVersion = entry.state.version
            entry.fileDigest = digest
        }
    }

    // MARK: - File changes

    /// What reading a scene file did.
    public enum FileOutcome: Sendable, Equatable {
        /// A change was accepted.
        case changed(ChangeRecord)
        /// The content equals the current state (the daemon's own write, or a repeated write).
        case unchanged
        /// The file was rejected; the scene keeps its last good state.
        case rejected(SceneFileError)
    }

    /// Merges the content of a scene file, or its removal (`bytes == nil`).
    public mutating func applyFile(_ id: SceneID, bytes: [UInt8]?) -> FileOutcome {
        guard let bytes else {
            guard let entry = entries[id] else { return .unchanged }
            let conflict =
                entry.fileVersion == entry.state.version
                ? nil : Conflict(path: entry.state.path, origin: entry.origin)
            return acceptDelete(id, origin: .file, conflict: conflict).map(FileOutcome.changed) ?? .unchanged
        }
        let digest = SceneStore.digest(bytes)
        if var entry = entries[id], entry.fileDigest == nil || entry.fileDigest == digest,
            entry.state.fileBytes == bytes
        {
            // Exactly what the state writes: the daemon's own write read back, or a restored scene's file. Not a
            // change, even where auto detection would read these bytes as another path (an array path of strings
            // such as `["A.b","1"]` looks codable). The digest spares encoding the state for files that changed.
            entry.fileVersion = entry.state.version
            entry.fileDigest = digest
            entries[id] = entry
            return .unchanged
        }
        let decoded: SceneFileCodec.Decoded
        do throws(SceneFileError) {
            decoded = try codec.decode(bytes)
        } catch {
            return .rejected(error)
        }
        if var entry = entries[id] {
            let format = decoded.format ?? entry.state.format
            if entry.state.elements.hasSameElements(as: decoded.elements), entry.state.format == format {
                // Same path: not a change, but remember the file's exact bytes for write-backs and snapshots,
                // the elements' own included (`42.0` for `42` is equal, yet the file now says `42.0`).
                entry.state.elements = decoded.elements
                entry.state.layout = decoded.layout
                entry.fileVersion = entry.state.version
                entry.fileDigest = digest
                entries[id] = entry
                return .unchanged
            }
            let conflict =
                entry.fileVersion == entry.state.version
                ? nil : Conflict(path: entry.state.path, origin: entry.origin)
            let next = revision + 1
            let state = SceneState(
                id: id, version: entry.state.version + 1, created: entry.state.created, modified: next,
                format: format, elements: decoded.elements, layout: decoded.layout)
            return .changed(
                accept(state: state, origin: .file, conflict: conflict, fileVersion: state.version, fileDigest: digest))
        }
        let next = revision + 1
        let state = SceneState(
            id: id, version: 1, created: next, modified: next,
            format: decoded.format ?? codec.policy.pinned ?? .array, elements: decoded.elements, layout: decoded.layout)
        return .changed(accept(state: state, origin: .file, conflict: nil, fileVersion: 1, fileDigest: digest))
    }

    /// Records that the daemon wrote `bytes` to a scene's file outside a commit (a restore or a conflict rewrite).
    public mutating func noteFileWritten(_ id: SceneID, bytes: [UInt8]) {
        guard var entry = entries[id] else { return }
        entry.fileVersion = entry.state.version
        entry.fileDigest = SceneStore.digest(bytes)
        entries[id] = entry
    }

    // MARK: - Phases

    /// Keeps the phase an app reported for a scene (§6 `phase`). Not a change: no revision, no version, no record,
    /// so subscribers and the file never hear of it; `get`, `state` events and snapshots show it.
    ///
    /// A phase for a scene that does not exist is not kept (`false`): the op accepts any valid ID, but there is no
    /// scene to hold it, and a scene created later starts without one, like any new scene.
    @discardableResult
    public mutating func recordPhase(_ phase: ScenePhase, of id: SceneID) -> Bool {
        guard var entry = entries[id] else { return false }
        entry.state.phase = phase
        entries[id] = entry
        return true
    }

    // MARK: - Restore

    /// Puts a scene from a snapshot back without a revision: restoring is not a change.
    ///
    /// The snapshot holds what the scene file held, so the file is taken to be at the restored version: a file
    /// that differs from it on the start-up scan is an ordinary change (§5), not a conflict. Its bytes are not
    /// known until read, so there is no digest yet.
    public mutating func restore(_ state: SceneState) {
        entries[state.id] = Entry(state: state, origin: .file, fileVersion: state.version, fileDigest: nil)
    }

    /// Makes room for `count` scenes at once, before restoring that many.
    public mutating func reserveCapacity(_ count: Int) {
        entries.reserveCapacity(count)
    }

    /// Moves the revision forward without a change, as after a crash, so that no revision is handed out twice.
    public mutating func advanceRevision(to floor: UInt64) {
        guard floor > revision else { return }
        revision = floor
        history = ChangeHistory(limit: history.limit, startingAt: floor)
    }

    /// Starts history afresh with a new limit (a reload of `history.max_revisions`), keeping what fits.
    public mutating func resizeHistory(limit: Int) {
        guard limit != history.limit else { return }
        var resized = ChangeHistory(limit: limit, startingAt: history.baseline)
        for record in history.records { resized.append(record) }
        history = resized
    }

    // MARK: - Internals

    /// Numbers and records a new state: for the store's own extensions only, which check the change first.
    mutating func accept(
        state: SceneState, origin: Origin, conflict: Conflict?, fileVersion: UInt64?, fileDigest: UInt64?
    ) -> ChangeRecord {
        revision += 1
        var state = state
        state.modified = revision
        if state.version == 1 { state.created = revision }
        // A change keeps the scene's phase, a new scene has none. Taken from the store now rather than from the
        // plan: a phase reported while a plan's file was being written is the newer one.
        state.phase = entries[state.id]?.state.phase
        let record = ChangeRecord(
            clock: clock, scene: state.id, kind: .set, version: state.version, format: state.format,
            elements: state.elements, origin: origin, conflict: conflict)
        let madeBy =
            record.details?.conflict == nil ? record.details : ChangeRecord.Details.make(origin: origin, conflict: nil)
        entries[state.id] = Entry(state: state, madeBy: madeBy, fileVersion: fileVersion, fileDigest: fileDigest)
        history.append(record)
        return record
    }

    /// Numbers and records a deletion, as ``accept(state:origin:conflict:fileVersion:fileDigest:)`` does a state.
    mutating func acceptDelete(_ id: SceneID, origin: Origin, conflict: Conflict?) -> ChangeRecord? {
        guard let entry = entries.removeValue(forKey: id) else { return nil }
        revision += 1
        // A deletion is a change of its own (§4): the deleted scene's last version + 1, whatever its source.
        let record = ChangeRecord(
            clock: clock, scene: id, kind: .delete, version: entry.state.version + 1, format: entry.state.format,
            path: nil, origin: origin, conflict: conflict)
        history.append(record)
        return record
    }

    /// FNV-1a: deterministic across runs (unlike `Hasher`), cheap, and only used to notice that bytes differ.
    public static func digest(_ bytes: [UInt8]) -> UInt64 {
        bytes.withUnsafeBytes(digest)
    }

    /// ``digest(_:)`` of bytes in place.
    public static func digest(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash ^= UInt64(byte)
            hash &*= 0x100_0000_01b3
        }
        return hash
    }
}
