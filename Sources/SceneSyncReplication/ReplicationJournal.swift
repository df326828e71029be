import NIOCore
import SceneSyncCore
import SceneSyncDaemon
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// This host's replication state in the state directory (`cluster-journal`): the changes not pushed yet (the
/// outbox), how far the database's feed was applied, and what this host last knew of each shared scene there.
///
/// One append-only file of JSON lines, with one writer. Recording a change (in the engine's turn that accepts it)
/// only updates the state in memory and queues its line: the engine never waits for the disk. The writer
/// (``writeQueued()``, run by the replicator on the daemon's blocking executor) writes everything queued with one
/// `write(2)`, in the order it was recorded, so the file always holds a prefix of the recorded lines. The queue
/// is bounded (``queueLimit``). At every start the file is replayed and rewritten compactly, durably (`fsync`).
///
/// A line still queued when the daemon is killed (SIGKILL) is lost, and with it possibly a change already
/// answered. The change itself is not: the engine wrote its scene file before answering, and the next start,
/// which has no shutdown snapshot to restore beyond the last one, finds the file different from it and records the
/// change again; a file back to the snapshot's content (or the snapshot's scene that `scenes.restore_missing`
/// writes back for a deletion) is found by comparing it with what the journal last saw this host hold
/// (``reconcile(holding:shares:)``). Three rules keep that true: a push number goes to the database only once its
/// line is in the file (``writtenPending(limit:)``), so a number lost with the queue was never used; a snapshot is
/// written only once the lines of the changes it holds are in the file (``waitUntilWritten()``), so it never hides
/// one; and a remote change's `recv` line is in the file before the engine writes its scene file, so that file is
/// not read back as a change of this host. The last two hold while the file can be written: when it cannot (a full
/// disk, ``Settlement/lacking``), neither the snapshot nor the remote change waits for the rewrite, and a crash
/// before it can leave a scene new to the cluster unpushed until its next change, or read a remote change's file
/// back as this host's (pushed again, it changes nothing in the database).
///
/// Writes are not synced, so that no push waits for the disk. Only a power loss (or a kernel crash) can then lose
/// the file's tail, and with it push numbers that the database may already hold: handing them out again would make
/// the database take new changes for duplicates of old ones, and drop them. The file records the kernel's boot ID;
/// a start in another boot skips ``numbersSkippedAfterABoot`` push numbers, more than a lost tail can have used.
/// Within one boot, only a failed write (a full disk) or a full queue can leave the file without a line: then
/// nothing is pushed until the file is rewritten with the whole state (``isWritten()``).
///
/// Only a torn last line (a crash in the middle of a write) is skipped at replay. Any other line the journal does
/// not understand is damage (``Damage``): the file is kept as it is, for inspection, and nothing is pushed or applied
/// until it is repaired or removed.
///
/// Line kinds: `stream` (the push stream's ID, next push number and boot), `state` (a checkpoint: cursor and
/// per-scene versions, digests, what this host held and the received change not applied yet), `local` (a change
/// to push), `pushed` (its database answer), `recv` (a database change about to be applied), `done` (the feed
/// applied it, with the digest of what the scene holds then).
final class ReplicationJournal: Sendable {
    /// How far the push numbers jump at the first start in a new boot: 2³², more than the writes a power loss
    /// can take (at 60 bytes a line, 256 GB never written back), and little enough for 2³¹ boots.
    static let numbersSkippedAfterABoot: UInt64 = 1 << 32

    /// The most bytes of lines the queue holds before it is dropped (see ``queueLimit``): 4 MiB, thousands of
    /// small changes or two of the largest scenes (1 MiB by default, twice that as hex), far more than piles up
    /// during one turn of the writer on a working disk.
    static let defaultQueueLimit = 4 << 20

    let path: String
    /// Set when the file is damaged: it is then never written, and the replicator neither pushes nor applies.
    let damage: Damage?
    /// Whether the last line was torn and skipped.
    let skippedTornLine: Bool
    /// Whether the stream record (``StreamRecord``) was there at this start: this host replicated before, so a
    /// change of its name from another stream is none it can account for (``ClusterReplicator/checkOwnRows(_:)``).
    let replicatedBefore: Bool
    /// The bound of the queue: a record that would take it past this drops every queued line and fails the
    /// journal as a failed write does. Nothing is lost, since the state holds what the lines said and the rewrite
    /// that follows writes it whole; the queue's memory stays bounded however slow the disk. One record always
    /// fits in an empty queue, so a scene larger than the bound alone never fails the journal.
    let queueLimit: Int

    /// What recording touches, in the engine's turn: memory only, never held over a system call. The state, the
    /// queue, whether the file lacks lines the state has (a failed write, a full queue), and the tickets that tell
    /// a waiter when the lines of the records before it are in the file.
    struct Guarded {
        var state: State
        var queue = Queue()
        var failed = false
        /// Whether the last failure was a full queue, not a failed write (for the log).
        var overflowed = false
        /// Counts the records that changed the state.
        var recorded: UInt64 = 0
        /// The last record whose lines are in the file.
        var settled: UInt64 = 0
        /// Whether a writer loop runs (``beginWriting()``): waiters rely on it.
        var writerRunning = false
        var waiters: [(ticket: UInt64, continuation: CheckedContinuation<Settlement, Never>)] = []
    }
    let guarded: Mutex<Guarded>

    /// What only the writer touches, on the blocking executor: the descriptor (`-1` when none is open), the
    /// file's length, the length the last flush covered, and the lines written since the file was last rewritten.
    /// Taken before ``guarded`` when both are.
    struct File {
        /// Opened for appending and for reading pending contents back (``contents(of:)``).
        var fd: Int32
        /// Where the next write lands.
        var size: Int64 = 0
        /// The length the last flush covered (``syncAppends(failing:)``): an idle file is not flushed again.
        var synced: Int64 = 0
        var lines = 0
    }
    let file: Mutex<File>

    /// Wakes the writer loop when lines are queued (or the file must be rewritten).
    let wake: AsyncStream<Void>.Continuation
    /// What the writer loop waits on; one consumer, the replicator's writer.
    let wakes: AsyncStream<Void>

    /// Replays the journal (a torn last line from a crash is skipped) and rewrites it compactly, unless it is
    /// damaged (``damage``). `boot` names the running kernel's boot (``currentBoot()``); `queueLimit` bounds the
    /// queue (tests make it small).
    init(
        directory: String, boot: String = ReplicationJournal.currentBoot(),
        queueLimit: Int = ReplicationJournal.defaultQueueLimit
    ) throws(ReplicationError) {
        path = directory + "/cluster-journal"
        self.queueLimit = queueLimit
        (wakes, wake) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        var state = State(stream: ReplicationJournal.newStream())
        let recordPath = directory + "/" + StreamRecord.fileName
        let (bytes, found, record) = ReplicationJournal.load(journal: path, record: recordPath, into: &state)
        (damage, skippedTornLine) = found
        replicatedBefore = record != nil
        if damage != nil {
            // Kept as it is for inspection: no rewrite, no write.
            guarded = Mutex(Guarded(state: state, failed: true))
            file = Mutex(File(fd: -1))
            return
        }
        // A file from another boot (or from a version that did not record it) may have lost its tail.
        if !bytes.isEmpty, state.boot != boot {
            state.nextNumber += ReplicationJournal.numbersSkippedAfterABoot
        }
        state.boot = boot
        let (compact, lines) = ReplicationJournal.encode(state)
        try ReplicationJournal.replace(path, with: compact)
        let appender = open(path, O_RDWR | O_APPEND | O_CLOEXEC)
        guard appender >= 0 else {
            throw ReplicationError("cannot open \(path): \(String(cString: strerror(errno)))")
        }
        // After the journal: a crash between the two leaves a journal without a record, which the next start
        // records, never a record without its journal.
        try StreamRecord(stream: state.stream, next: state.nextNumber).write(to: recordPath)
        ReplicationJournal.moveContentsToFile(&state, lines: lines)
        guarded = Mutex(Guarded(state: state))
        file = Mutex(File(fd: appender, size: Int64(compact.count), synced: Int64(compact.count)))
    }

    deinit {
        file.withLock { if $0.fd >= 0 { close($0.fd) } }
        wake.finish()
    }

    func withState<T>(_ body: (inout State) -> T) -> T {
        guarded.withLock { body(&$0.state) }
    }

    var snapshot: State { guarded.withLock { $0.state } }

    /// Wakes the writer; a no-op when it is awake already.
    func wakeWriter() { wake.yield() }

    // MARK: - Recording

    /// A local change to push; `nil` when it only repeats what the database holds and nothing of this host is
    /// pending for the scene.
    @discardableResult
    func recordLocal(scene: SceneID, bytes: [UInt8]?, format: SceneFormat, origin: Origin) -> Pending? {
        let recorded = guarded.withLock { guarded -> (Pending, Bool)? in
            let digest = bytes.map(SceneStore.digest) ?? 0
            if guarded.state.pendingCounts[scene, default: 0] == 0, guarded.state.digests[scene] == digest,
                guarded.state.applied[scene] != nil
            {
                return nil
            }
            let pending = Pending(
                number: guarded.state.nextNumber, scene: scene, bytes: bytes, format: format, origin: origin)
            guarded.state.nextNumber += 1
            guarded.state.pending.append(pending)
            guarded.state.pendingCounts[scene, default: 0] += 1
            // The content stays in memory until the writer has put the line in the file.
            return (pending, enqueue(ReplicationJournal.localLine(pending), local: pending.number, to: &guarded))
        }
        guard let (pending, queued) = recorded else { return nil }
        if queued { wake.yield() }
        return pending
    }

    /// The contents of pending changes (`nil` for a deletion), read back from the file where they are only there.
    /// A blocking call: run it on the blocking executor. Where each line is comes from the state, not from the
    /// batch, which a rewrite meanwhile may have moved.
    func contents(of batch: [Pending]) throws(ReplicationError) -> [[UInt8]?] {
        try file.withLock { file throws(ReplicationError) -> [[UInt8]?] in
            let current = guarded.withLock { guarded in
                batch.map { change in
                    guarded.state.pendingIndex(of: change.number).map { guarded.state.pending[$0] } ?? change
                }
            }
            return try ReplicationJournal.readContents(of: current, from: file.fd)
        }
    }

    /// The database's answer to a push: it committed as `version` (or was already there).
    func recordPushed(_ number: UInt64, scene: SceneID, seq: Int64, version: Int64, digest: UInt64) {
        recordPushed([PushAnswer(number: number, scene: scene, seq: seq, version: version, digest: digest)])
    }

    /// The database's answers to a batch, in push order, queued together. The sequences this host committed right
    /// after the feed's cursor move the cursor on at once: the feed would only skip them.
    func recordPushed(_ answers: [PushAnswer]) {
        let queued = guarded.withLock { guarded -> Bool in
            var lines: [UInt8] = []
            for answer in answers {
                guard guarded.state.removePending(answer.number) != nil else { continue }
                let scene = answer.scene
                let left = guarded.state.pendingCounts[scene, default: 1] - 1
                guarded.state.pendingCounts[scene] = left > 0 ? left : nil
                if answer.version > 0 { guarded.state.applied[scene] = answer.version }
                if answer.seq > 0 {
                    guarded.state.ownSeqs[scene] = max(guarded.state.ownSeqs[scene] ?? 0, answer.seq)
                    if answer.seq > guarded.state.cursor { guarded.state.ownAhead.insert(answer.seq) }
                }
                guarded.state.digests[scene] = answer.digest
                guarded.state.held[scene] = answer.digest
                lines.append(contentsOf: #"{"t":"pushed","n":"#.utf8)
                JSONWriter.appendUInt(answer.number, to: &lines)
                lines.append(contentsOf: #","seq":"#.utf8)
                JSONWriter.appendInt(answer.seq, to: &lines)
                lines.append(contentsOf: #","scene":"#.utf8)
                JSONWriter.appendString(scene.rawValue, to: &lines)
                lines.append(contentsOf: #","version":"#.utf8)
                JSONWriter.appendInt(answer.version, to: &lines)
                lines.append(contentsOf: #","digest":"#.utf8)
                JSONWriter.appendUInt(answer.digest, to: &lines)
                lines.append(contentsOf: "}\n".utf8)
            }
            let before = guarded.state.cursor
            ReplicationJournal.absorbOwn(&guarded.state)
            if guarded.state.cursor > before {
                lines.append(contentsOf: #"{"t":"done","seq":"#.utf8)
                JSONWriter.appendInt(guarded.state.cursor, to: &lines)
                lines.append(contentsOf: "}\n".utf8)
            }
            return !lines.isEmpty && enqueue(lines, count: answers.count + 1, to: &guarded)
        }
        if queued { wake.yield() }
    }

    /// Whether the feed must read the log to reach `seq`: not when every change up to it is applied already or is
    /// one of this host's own (which the feed skips anyway).
    func needsCatchUp(to seq: Int64) -> Bool {
        guarded.withLock { $0.state.cursor < seq }
    }

    /// A database change about to be handed to the engine: what the database holds for the scene now.
    func recordReceived(seq: Int64, scene: SceneID, digest: UInt64) {
        recordReceived([Received(seq: seq, scene: scene, digest: digest)])
    }

    /// Database changes about to be handed to the engine together, queued together. The replicator waits until
    /// they are in the file (``waitUntilWritten()``) before the engine writes their scene files.
    func recordReceived(_ changes: [Received]) {
        guard !changes.isEmpty else { return }
        let queued = guarded.withLock { guarded -> Bool in
            var lines: [UInt8] = []
            for change in changes {
                guarded.state.digests[change.scene] = change.digest
                guarded.state.received[change.scene] = change.seq
                lines.append(contentsOf: #"{"t":"recv","seq":"#.utf8)
                JSONWriter.appendInt(change.seq, to: &lines)
                lines.append(contentsOf: #","scene":"#.utf8)
                JSONWriter.appendString(change.scene.rawValue, to: &lines)
                lines.append(contentsOf: #","digest":"#.utf8)
                JSONWriter.appendUInt(change.digest, to: &lines)
                lines.append(contentsOf: "}\n".utf8)
            }
            return enqueue(lines, count: changes.count, to: &guarded)
        }
        if queued { wake.yield() }
    }

    /// The feed is done with `seq`; when this host's state now reflects it, the scene is based on `version`.
    func recordDone(seq: Int64, scene: SceneID?, version: Int64?) {
        recordDone([Done(seq: seq, scene: scene, version: version)])
    }

    /// The feed is done with these changes, in database order; queued together.
    func recordDone(_ changes: [Done]) {
        guard !changes.isEmpty else { return }
        let queued = guarded.withLock { guarded -> Bool in
            var lines: [UInt8] = []
            for change in changes {
                guarded.state.cursor = max(guarded.state.cursor, change.seq)
                ReplicationJournal.absorbOwn(&guarded.state)
                lines.append(contentsOf: #"{"t":"done","seq":"#.utf8)
                JSONWriter.appendInt(guarded.state.cursor, to: &lines)
                if let scene = change.scene, let version = change.version {
                    guarded.state.applied[scene] = version
                    lines.append(contentsOf: #","scene":"#.utf8)
                    JSONWriter.appendString(scene.rawValue, to: &lines)
                    lines.append(contentsOf: #","version":"#.utf8)
                    JSONWriter.appendInt(version, to: &lines)
                    if let digest = change.digest ?? guarded.state.digests[scene] {
                        guarded.state.held[scene] = digest
                        lines.append(contentsOf: #","digest":"#.utf8)
                        JSONWriter.appendUInt(digest, to: &lines)
                    }
                }
                lines.append(contentsOf: "}\n".utf8)
            }
            return enqueue(lines, count: changes.count, to: &guarded)
        }
        if queued { wake.yield() }
    }

    /// Moves the cursor over this host's own committed sequences that directly follow it, and forgets those it
    /// passed: only a gap (another host's change not applied yet) stops it.
    private static func absorbOwn(_ state: inout State) {
        guard !state.ownAhead.isEmpty else { return }
        while state.ownAhead.remove(state.cursor + 1) != nil { state.cursor += 1 }
        state.ownAhead = state.ownAhead.filter { $0 > state.cursor }
    }
}
