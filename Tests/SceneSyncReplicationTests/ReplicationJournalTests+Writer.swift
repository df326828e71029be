import Foundation
import SceneSyncCore
import Synchronization
import Testing

@testable import SceneSyncReplication

/// The journal's one writer: recording only queues, a turn writes everything queued in order, a full queue is
/// dropped and the file rewritten from the state, and only changes whose line is in the file may be pushed.
extension ReplicationJournalTests {
    /// The state without where its lines are: what a replay of the file must give back.
    func placeless(_ state: ReplicationJournal.State) -> [ReplicationJournal.Pending] {
        state.pending.map { pending in
            var copy = pending
            copy.line = nil
            copy.bytes = nil
            return copy
        }
    }

    func expectReplayEquals(_ live: ReplicationJournal.State) throws {
        let replayed = try ReplicationJournal(directory: directory).snapshot
        #expect(placeless(replayed) == placeless(live))
        #expect(replayed.nextNumber == live.nextNumber)
        #expect(replayed.cursor == live.cursor)
        #expect(replayed.applied == live.applied)
        #expect(replayed.digests == live.digests)
        #expect(replayed.ownSeqs == live.ownSeqs)
        #expect(replayed.pendingCounts == live.pendingCounts)
    }

    @Test func recordingOnlyQueuesAndATurnWritesEveryLineInTheOrderRecorded() throws {
        let a = try scene("a")
        let b = try scene("b")
        let journal = try ReplicationJournal(directory: directory)
        let start = try lines()
        journal.recordLocal(scene: a, bytes: Array("[1]".utf8), format: .array, origin: .file)
        journal.recordLocal(scene: b, bytes: Array("[2]".utf8), format: .array, origin: client("app"))
        journal.recordPushed(1, scene: a, seq: 5, version: 1, digest: SceneStore.digest(Array("[1]".utf8)))
        journal.recordReceived(seq: 6, scene: b, digest: 66)
        journal.recordDone(seq: 6, scene: b, version: 2)
        journal.recordLocal(scene: a, bytes: nil, format: .array, origin: .file)
        // Nothing reached the file: the engine's turn never waits for it.
        #expect(try lines() == start)
        #expect(journal.snapshot.pending.allSatisfy { $0.line == nil })

        let outcome = journal.writeQueued()
        #expect(outcome == .init(written: true, newlyPushable: true, overflowed: false))
        let kinds = try lines().dropFirst(start.count).map { line -> String in
            let json = try JSONParser.parse(Array(line.utf8))
            return (json["t"]?.stringValue ?? "?") + (json["n"]?.uint64Value.map { " \($0)" } ?? "")
        }
        #expect(kinds == ["local 1", "local 2", "pushed 1", "recv", "done", "local 3"])
        // The contents left memory for the file, and read back the same.
        let pending = Array(journal.snapshot.pending)
        #expect(pending.allSatisfy { $0.bytes == nil && $0.line != nil })
        #expect(try journal.contents(of: pending) == [Array("[2]".utf8), nil])
        // A turn with nothing queued writes nothing.
        #expect(journal.writeQueued() == .init(written: true, newlyPushable: false, overflowed: false))
        #expect(try lines().count == start.count + 6)
        try expectReplayEquals(journal.snapshot)
    }

    @Test func aPushNeverCarriesANumberWhoseLineIsNotInTheFile() throws {
        let a = try scene("a")
        let journal = try ReplicationJournal(directory: directory)
        for value in 1...3 { journal.recordLocal(scene: a, bytes: [UInt8(value)], format: .array, origin: .file) }
        #expect(journal.writtenPending(limit: 256).isEmpty)
        journal.writeQueued()
        for value in 4...5 { journal.recordLocal(scene: a, bytes: [UInt8(value)], format: .array, origin: .file) }
        // The batch stops before the first change still queued.
        #expect(journal.writtenPending(limit: 256).map(\.number) == [1, 2, 3])
        #expect(journal.writtenPending(limit: 2).map(\.number) == [1, 2])
        journal.writeQueued()
        #expect(journal.writtenPending(limit: 256).map(\.number) == [1, 2, 3, 4, 5])
    }

    /// A queue past its bound is dropped, and the journal lacks lines as after a failed write: nothing is pushed
    /// until the writer's next turn has rewritten the file from the state, which holds every change.
    @Test func aFullQueueIsDroppedAndTheRewriteBringsEveryChangeBack() throws {
        let a = try scene("a")
        let b = try scene("b")
        let journal = try ReplicationJournal(directory: directory, queueLimit: 600)
        journal.recordLocal(scene: a, bytes: Array("[0]".utf8), format: .array, origin: .file)
        journal.writeQueued()
        let start = try lines()
        var contents: [[UInt8]] = [Array("[0]".utf8)]
        var overflowed = false
        for value in 1...40 {
            let bytes = Array("[\(value)]".utf8)
            contents.append(bytes)
            journal.recordLocal(scene: value % 2 == 0 ? a : b, bytes: bytes, format: .array, origin: .file)
            let queued = journal.guarded.withLock { $0.queue.bytes.count }
            #expect(queued <= journal.queueLimit)
            overflowed = overflowed || journal.lacksLines
        }
        journal.recordDone(seq: 9, scene: b, version: 4)
        #expect(overflowed)
        #expect(journal.lacksLines)
        // Nothing was written meanwhile, and only the change written before may be pushed, once the file is whole.
        #expect(try lines() == start)
        #expect(journal.writtenPending(limit: 256).map(\.number) == [1])

        let outcome = journal.writeQueued()
        #expect(outcome == .init(written: true, newlyPushable: true, overflowed: true))
        #expect(!journal.lacksLines)
        #expect(journal.writtenPending(limit: 256).map(\.number) == Array(1...41))
        #expect(try journal.contents(of: Array(journal.snapshot.pending)) == contents)
        // Recording goes on into the new file.
        journal.recordLocal(scene: a, bytes: Array("[41]".utf8), format: .array, origin: .file)
        contents.append(Array("[41]".utf8))
        journal.writeQueued()
        #expect(try journal.contents(of: Array(journal.snapshot.pending)) == contents)
        #expect(journal.snapshot.cursor == 9)
        try expectReplayEquals(journal.snapshot)
    }

    /// One record alone never fails the journal, even one larger than the bound (a large scene).
    @Test func aRecordLargerThanTheBoundFitsAnEmptyQueue() throws {
        let a = try scene("a")
        let journal = try ReplicationJournal(directory: directory, queueLimit: 100)
        let big = [UInt8](repeating: UInt8(ascii: "x"), count: 1_000)
        journal.recordLocal(scene: a, bytes: big, format: .array, origin: .file)
        #expect(!journal.lacksLines)
        #expect(journal.writeQueued() == .init(written: true, newlyPushable: true, overflowed: false))
        #expect(try journal.contents(of: Array(journal.snapshot.pending)) == [big])
    }

    /// What the snapshot path waits for: the lines of every record before it, written by the writer loop.
    @Test func aWaiterReturnsOnlyOnceTheWriterHasWrittenItsRecords() async throws {
        let a = try scene("a")
        let journal = try ReplicationJournal(directory: directory)
        let start = try lines().count
        // Without a writer loop the caller is told to take the turn itself.
        journal.recordLocal(scene: a, bytes: [1], format: .array, origin: .file)
        #expect(await journal.waitUntilWritten() == .noWriter)
        journal.writeQueued()
        // Nothing recorded since: no wait.
        #expect(await journal.waitUntilWritten() == .written)

        journal.beginWriting()
        journal.recordLocal(scene: a, bytes: [2], format: .array, origin: .file)
        let path = path
        let returned = Flag()
        let waiter = Task {
            let waited = await journal.waitUntilWritten()
            let count = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").count
            returned.set()
            return (waited, count)
        }
        while journal.guarded.withLock({ $0.waiters.isEmpty }), !returned.isSet {
            await Task.yield()
        }
        #expect(!returned.isSet, "the waiter did not wait for the writer")
        // The loop may not end while a record waits for it.
        #expect(!journal.finishWriting())
        journal.writeQueued()
        let (waited, count) = try await waiter.value
        #expect(waited == .written)
        #expect(count == start + 2)
        #expect(journal.finishWriting())
    }
}

/// Set once, from another task.
final class Flag: Sendable {
    private let value = Atomic(false)
    var isSet: Bool { value.load(ordering: .sequentiallyConsistent) }
    func set() { value.store(true, ordering: .sequentiallyConsistent) }
}

/// A waiter is told the truth about a journal that lacks lines.
extension ReplicationJournalTests {
    /// Waits until `journal` holds a waiter.
    func untilWaiting(_ journal: ReplicationJournal) async {
        while journal.guarded.withLock({ $0.waiters.isEmpty }) { await Task.yield() }
    }

    /// A failed flush lets the waiter go at once, told its lines are not in the file: a snapshot goes on, and
    /// knows it.
    @Test func aWaiterIsToldWhenAFailureLeftItsLinesOutOfTheFile() async throws {
        let a = try scene("a")
        let journal = try ReplicationJournal(directory: directory)
        journal.beginWriting()
        journal.recordLocal(scene: a, bytes: [1], format: .array, origin: .file)
        let waiter = Task { await journal.waitUntilWritten() }
        await untilWaiting(journal)
        #expect(!journal.syncAppends(failing: true))
        #expect(await waiter.value == .lacking)
        // Still lacking until a rewrite: a later waiter is not told otherwise.
        #expect(journal.lacksLines)
        #expect(journal.writeQueued().written)
        #expect(await journal.waitUntilWritten() == .written)
    }

    /// A record made while the journal lacks lines wakes nobody; the waiter that needs it wakes the writer, which
    /// rewrites the file, instead of sleeping until the next flush.
    @Test func aWaiterWhileTheJournalLacksLinesWakesTheWriter() async throws {
        let a = try scene("a")
        let journal = try ReplicationJournal(directory: directory)
        journal.beginWriting()
        #expect(!journal.syncAppends(failing: true))
        journal.recordLocal(scene: a, bytes: [1], format: .array, origin: .file)
        let writer = Task {
            // One turn per wake, as the replicator's writer loop; it ends when the waiter is answered.
            for await _ in journal.wakes {
                journal.writeQueued()
                if journal.guarded.withLock({ $0.waiters.isEmpty }) { return }
            }
        }
        let settlement = await journal.waitUntilWritten()
        writer.cancel()
        #expect(settlement == .written)
        #expect(!journal.lacksLines)
        #expect(journal.writtenPending(limit: 256).map(\.number) == [1])
    }
}
