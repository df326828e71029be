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
/// One append-only file of JSON lines. A local change is appended with `write(2)` in the engine turn that accepts
/// it, before its answer or event leaves: it survives a crash of the daemon (SIGKILL) exactly as the scene file the
/// same turn wrote does. At every start the file is replayed and rewritten compactly, durably (`fsync`).
///
/// Appends are not synced, so that no push waits for the disk. Only a power loss (or a kernel crash) can then lose
/// the file's tail, and with it push numbers that the database may already hold: handing them out again would make
/// the database take new changes for duplicates of old ones, and drop them. The file records the kernel's boot ID;
/// a start in another boot skips ``numbersSkippedAfterABoot`` push numbers, more than a lost tail can have used.
/// Within one boot, only a failed append (a full disk) can leave the file without a line: then nothing is pushed
/// until the file is rewritten with the whole state (``isWritten()``).
///
/// Only a torn last line (a crash in the middle of an append) is skipped at replay. Any other line the journal does
/// not understand is damage (``Damage``): the file is kept as it is, for inspection, and nothing is pushed or applied
/// until it is repaired or removed.
///
/// Line kinds: `stream` (the push stream's ID, next push number and boot), `state` (a checkpoint: cursor and
/// per-scene versions and digests), `local` (a change to push), `pushed` (its database answer), `recv` (a database
/// change about to be applied), `done` (the feed applied it).
final class ReplicationJournal: Sendable {
    /// How far the push numbers jump at the first start in a new boot: 2³², more than the appends a power loss
    /// can take (at 60 bytes a line, 256 GB never written back), and little enough for 2³¹ boots.
    static let numbersSkippedAfterABoot: UInt64 = 1 << 32

    let path: String
    /// Set when the file is damaged: it is then never written, and the replicator neither pushes nor applies.
    let damage: Damage?
    /// Whether the last line was torn and skipped.
    let skippedTornLine: Bool

    /// The state, the descriptor appends go to (`-1` when none is open), the lines appended since the file was last
    /// rewritten, and whether an append or a rewrite failed since: then the file lacks lines the state has.
    private struct Guarded {
        var state: State
        /// Opened for appending and for reading pending contents back (``contents(of:)``).
        var fd: Int32
        /// The file's length: where the next append lands.
        var size: Int64 = 0
        /// The length the last flush covered (``syncAppends(failing:)``): an idle file is not flushed again.
        var synced: Int64 = 0
        var lines = 0
        var failed = false
    }
    private let guarded: Mutex<Guarded>

    /// Replays the journal (a torn last line from a crash is skipped) and rewrites it compactly, unless it is
    /// damaged (``damage``). `boot` names the running kernel's boot (``currentBoot()``).
    init(directory: String, boot: String = ReplicationJournal.currentBoot()) throws(ReplicationError) {
        path = directory + "/cluster-journal"
        var state = State(stream: ReplicationJournal.newStream())
        let bytes: [UInt8]
        do throws(SystemError) {
            bytes = try FileSystem.read(path) ?? []
        } catch {
            throw ReplicationError("cannot read \(path): \(error)")
        }
        (damage, skippedTornLine) = ReplicationJournal.replay(bytes, into: &state)
        if damage != nil {
            // Kept as it is for inspection: no rewrite, no append.
            guarded = Mutex(Guarded(state: state, fd: -1, failed: true))
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
        ReplicationJournal.moveContentsToFile(&state, lines: lines)
        guarded = Mutex(Guarded(state: state, fd: appender, size: Int64(compact.count), synced: Int64(compact.count)))
    }

    deinit {
        guarded.withLock { if $0.fd >= 0 { close($0.fd) } }
    }

    func withState<T>(_ body: (inout State) -> T) -> T {
        guarded.withLock { body(&$0.state) }
    }

    var snapshot: State { guarded.withLock { $0.state } }

    // MARK: - Recording

    /// A local change to push; `nil` when it only repeats what the database holds and nothing of this host is
    /// pending for the scene.
    @discardableResult
    func recordLocal(scene: SceneID, bytes: [UInt8]?, format: SceneFormat, origin: Origin) -> Pending? {
        guarded.withLock { guarded -> Pending? in
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
            let line = ReplicationJournal.localLine(pending)
            if let offset = append(line, to: &guarded), let last = guarded.state.pending.indices.last {
                guarded.state.pending[last].line = offset..<(offset + Int64(line.count))
                guarded.state.pending[last].bytes = nil
            }
            return pending
        }
    }

    /// The contents of pending changes (`nil` for a deletion), read back from the file where they are only there.
    /// A blocking call: run it off the cooperative pool.
    func contents(of batch: [Pending]) throws(ReplicationError) -> [[UInt8]?] {
        try guarded.withLock { guarded throws(ReplicationError) -> [[UInt8]?] in
            try ReplicationJournal.readContents(of: batch, from: guarded.fd)
        }
    }

    /// The database's answer to a push: it committed as `version` (or was already there).
    func recordPushed(_ number: UInt64, scene: SceneID, seq: Int64, version: Int64, digest: UInt64) {
        recordPushed([PushAnswer(number: number, scene: scene, seq: seq, version: version, digest: digest)])
    }

    /// The database's answers to a batch, in push order, written with one `write(2)`. The sequences this host
    /// committed right after the feed's cursor move the cursor on at once: the feed would only skip them.
    func recordPushed(_ answers: [PushAnswer]) {
        guarded.withLock { guarded in
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
            if !lines.isEmpty { append(lines, to: &guarded, count: answers.count + 1) }
        }
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

    /// Database changes about to be handed to the engine together, with one `write(2)`.
    func recordReceived(_ changes: [Received]) {
        guard !changes.isEmpty else { return }
        guarded.withLock { guarded in
            var lines: [UInt8] = []
            for change in changes {
                guarded.state.digests[change.scene] = change.digest
                lines.append(contentsOf: #"{"t":"recv","seq":"#.utf8)
                JSONWriter.appendInt(change.seq, to: &lines)
                lines.append(contentsOf: #","scene":"#.utf8)
                JSONWriter.appendString(change.scene.rawValue, to: &lines)
                lines.append(contentsOf: #","digest":"#.utf8)
                JSONWriter.appendUInt(change.digest, to: &lines)
                lines.append(contentsOf: "}\n".utf8)
            }
            append(lines, to: &guarded, count: changes.count)
        }
    }

    /// The feed is done with `seq`; when this host's state now reflects it, the scene is based on `version`.
    func recordDone(seq: Int64, scene: SceneID?, version: Int64?) {
        recordDone([Done(seq: seq, scene: scene, version: version)])
    }

    /// The feed is done with these changes, in database order; one `write(2)`.
    func recordDone(_ changes: [Done]) {
        guard !changes.isEmpty else { return }
        guarded.withLock { guarded in
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
                }
                lines.append(contentsOf: "}\n".utf8)
            }
            append(lines, to: &guarded, count: changes.count)
        }
    }

    /// Moves the cursor over this host's own committed sequences that directly follow it, and forgets those it
    /// passed: only a gap (another host's change not applied yet) stops it.
    private static func absorbOwn(_ state: inout State) {
        guard !state.ownAhead.isEmpty else { return }
        while state.ownAhead.remove(state.cursor + 1) != nil { state.cursor += 1 }
        state.ownAhead = state.ownAhead.filter { $0 > state.cursor }
    }

    /// Appends with one `write(2)`, and keeps the file bounded on a long run: once nothing is pending, the state
    /// alone replaces it. After a failed append (a full disk) the file is left alone until ``isWritten()`` rewrites
    /// it: a torn line followed by more appends would take a good line with it. Returns where the line begins in
    /// the file, when it was written.
    @discardableResult
    private func append(_ line: [UInt8], to guarded: inout Guarded, count: Int = 1) -> Int64? {
        guard !guarded.failed else { return nil }
        guarded.lines += count
        if !FileSystem.writeAll(guarded.fd, line) {
            guarded.failed = true
            return nil
        }
        let offset = guarded.size
        guarded.size += Int64(line.count)
        if guarded.lines > ReplicationJournal.compactionLines, guarded.state.pending.isEmpty {
            rewrite(&guarded)
        }
        return offset
    }

    /// How many lines the file may grow to before it is rewritten while the daemon runs.
    static let compactionLines = 100_000

    /// Flushes what was appended to the disk (`fdatasync`, on a duplicate of the descriptor so appends go on), so
    /// that a disk which fails to write back pages already appended (an I/O error, not a full disk) is found. Such
    /// a failure is treated as a failed append: nothing is pushed until the file is rewritten whole and synced
    /// (``isWritten()``). `failing` plays that error, for tests. Returns `false` when the sync failed.
    @discardableResult
    func syncAppends(failing: Bool = false) -> Bool {
        let (fd, size) = guarded.withLock { guarded -> (Int32?, Int64) in
            // A failed file is rewritten, and a rewrite syncs, before anything is pushed again.
            guard !guarded.failed, guarded.fd >= 0, guarded.synced < guarded.size || failing else {
                return (nil, 0)
            }
            return (dup(guarded.fd), guarded.size)
        }
        guard let fd else { return true }
        // Out of descriptors: nothing is known about the disk, so only this sync failed; the next one tries again.
        guard fd >= 0 else { return false }
        defer { close(fd) }
        guard !failing, fdatasync(fd) == 0 else {
            guarded.withLock { $0.failed = true }
            return false
        }
        guarded.withLock { $0.synced = max($0.synced, size) }
        return true
    }

    /// Whether the file holds every line of the state; when an append failed, it tries to rewrite the file first.
    /// The replicator pushes nothing while it does not: a push number the file lacks could be handed out again
    /// after a restart, and the database would take that later change for a duplicate and drop it. A damaged file
    /// is never rewritten.
    func isWritten() -> Bool {
        guard damage == nil else { return false }
        return guarded.withLock { guarded in
            if guarded.failed { rewrite(&guarded) }
            return !guarded.failed
        }
    }

    /// Replaces the file with the state alone, durably, and appends to the new file from then on. Any failure
    /// (the rename may have happened or not) leaves the journal failed, to be rewritten again.
    private func rewrite(_ guarded: inout Guarded) {
        // The contents only the old file holds go into the new one; held in memory only for the rewrite.
        var whole = guarded.state
        let encoded: (bytes: [UInt8], lines: [Range<Int64>])
        do throws(ReplicationError) {
            let contents = try Self.readContents(of: whole.pending, from: guarded.fd)
            for (index, content) in zip(whole.pending.indices, contents) where !whole.pending[index].deleted {
                whole.pending[index].bytes = content
            }
            encoded = ReplicationJournal.encode(whole)
            try ReplicationJournal.replace(path, with: encoded.bytes)
        } catch {
            guarded.failed = true
            return
        }
        // The old file is gone: every content is in memory until the new one can be read.
        guarded.state.pending = whole.pending
        if guarded.fd >= 0 { close(guarded.fd) }
        guarded.fd = open(path, O_RDWR | O_APPEND | O_CLOEXEC)
        guarded.failed = guarded.fd < 0
        guarded.lines = 0
        guarded.size = Int64(encoded.bytes.count)
        guarded.synced = guarded.size  // written durably
        // With no descriptor to read them back, the contents stay in memory.
        if !guarded.failed { ReplicationJournal.moveContentsToFile(&guarded.state, lines: encoded.lines) }
    }
}
