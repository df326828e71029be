import SceneSyncCore

/// The changes a `SIGKILL` took the `local` line of that the start-up merge cannot see: those whose scene ended as
/// the last snapshot has it, while the journal holds a later state of this host's.
extension ReplicationJournal {
    /// Records again, as changes of origin `file`, the shared scenes whose content (`scenes`: this host's scenes
    /// that `shares` accepts, with their file's bytes and format; a shared scene missing from it is absent here)
    /// is not what the journal last saw this host hold, and returns them. Run once, after the start-up merge and
    /// before the replicator: nothing else records meanwhile.
    ///
    /// The start-up merge records every scene file that differs from the restored snapshot. A lost line whose
    /// change ended on the snapshot's content (set B, pushed; set A again, the line lost) leaves a file equal to
    /// the snapshot, and the database on B: only the journal can tell.
    @discardableResult
    func reconcile(
        holding scenes: [SceneID: (bytes: [UInt8], format: SceneFormat)], shares: (SceneID) -> Bool
    ) -> [Pending] {
        let expected = snapshot.expectedDigests()
        let candidates = Set(scenes.keys).union(expected.keys.filter(shares)).sorted()
        var recorded: [Pending] = []
        for scene in candidates {
            let content = scenes[scene]
            guard let digest = expected[scene], digest != content.map({ SceneStore.digest($0.bytes) }) ?? 0 else {
                continue
            }
            // A deletion's format is read by no host; the journal does not keep the scene's last one.
            let change = recordLocal(
                scene: scene, bytes: content?.bytes, format: content?.format ?? .array, origin: .file)
            if let change { recorded.append(change) }
        }
        return recorded
    }
}

extension ReplicationJournal {
    /// Records, as changes of origin `file`, this host's shared scenes that the journal knows nothing of (never
    /// pushed, received or found agreeing with the database, and nothing pending), and returns them: every scene
    /// at the start of a new push stream (a first start, or one after the journal and its stream record were
    /// removed), and at other starts the scenes created while the journal was damaged or before they were shared.
    /// Each is a change the cluster may never have seen; the replicator settles them against the database before
    /// it catches up (``ClusterReplicator/settleAdopted(_:)``). Run once, after ``reconcile(holding:shares:)``.
    @discardableResult
    func adopt(holding scenes: [SceneID: (bytes: [UInt8], format: SceneFormat)]) -> [Pending] {
        let state = snapshot
        var adopted: [Pending] = []
        for scene in scenes.keys.sorted() {
            guard state.pendingCounts[scene, default: 0] == 0, state.held[scene] == nil,
                state.digests[scene] == nil, state.received[scene] == nil, state.applied[scene] == nil,
                let content = scenes[scene]
            else { continue }
            if let change = recordLocal(scene: scene, bytes: content.bytes, format: content.format, origin: .file) {
                adopted.append(change)
            }
        }
        return adopted
    }

    /// Settles the adopted change `number` without pushing it: the database holds a newer state of its scene that
    /// this host's content was an earlier state of, so this host was behind, not ahead. The change leaves the
    /// outbox as if answered with nothing committed.
    func withdraw(_ change: Pending) {
        recordPushed([PushAnswer(number: change.number, scene: change.scene, seq: 0, version: 0, digest: change.digest)]
        )
    }
}

extension ReplicationJournal {
    /// The shared scenes whose expected content (see ``State/expectedDigests()``) is a deletion.
    func scenesHeldDeleted(shares: (SceneID) -> Bool) -> Set<SceneID> {
        let expected = snapshot.expectedDigests()
        return Set(expected.compactMap { scene, digest in digest == 0 && shares(scene) ? scene : nil })
    }
}

extension ReplicationJournal.State {
    /// Per scene, the digest (0 for a deletion) of what this host's scene file holds unless the line of a later
    /// change of this host was lost.
    ///
    /// With changes pending, the last one's: its line is in the file, and the start-up merge records a file that
    /// differs from the snapshot after it. Otherwise what the journal last saw this host hold (``held``), but for
    /// a scene with a received change beyond the cursor, which the file may not hold yet and the feed applies
    /// again. None for a scene the journal never saw agree with the database: a scene this host had before it
    /// shared it, or created while the journal was damaged, is adopted (``adopt(holding:)``), and the lost line of a scene new since the
    /// last snapshot (which waits for the lines of the changes it holds) left a file the snapshot lacks, which the
    /// merge records.
    func expectedDigests() -> [SceneID: UInt64] {
        var expected = held.filter { scene, _ in received[scene].map { $0 <= cursor } ?? true }
        for change in pending { expected[change.scene] = change.digest }
        return expected
    }
}
