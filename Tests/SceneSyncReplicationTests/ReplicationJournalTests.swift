import Foundation
import SceneSyncCore
import Testing

@testable import SceneSyncReplication

/// The journal is what makes "nothing acknowledged is lost" and "never committed twice" hold across restarts (§9):
/// each test reopens it on the same directory, as a restarted daemon does.
@Suite final class ReplicationJournalTests {
    let directory: String

    init() throws {
        var template = Array((NSTemporaryDirectory() + "/ssj.XXXXXX").utf8CString)
        guard let created = mkdtemp(&template) else { throw POSIXError(.EIO) }
        directory = String(cString: created)
    }

    deinit {
        try? FileManager.default.removeItem(atPath: directory)
    }

    var path: String { directory + "/cluster-journal" }

    func scene(_ name: String) throws -> SceneID { try #require(SceneID(name)) }

    func client(_ name: String) -> Origin { Origin(source: .client, client: name, uid: 1000, pid: 42) }

    func lines() throws -> [String] {
        try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map(String.init)
    }

    @Test func pendingChangesSurviveAReopenWithTheirBytesAndOrigins() throws {
        let a = try scene("a")
        let b = try scene("b")
        do {
            let journal = try ReplicationJournal(directory: directory)
            try #require(journal.recordLocal(scene: a, bytes: Array("[1]".utf8), format: .array, origin: .file) != nil)
            journal.recordLocal(scene: b, bytes: [0, 0xFF, 0x0A, 0x22], format: .codable, origin: client("app"))
            journal.recordLocal(scene: a, bytes: nil, format: .array, origin: client("other"))
            journal.writeQueued()
        }
        let reopened = try ReplicationJournal(directory: directory)
        let pending = Array(reopened.snapshot.pending)
        #expect(pending.map(\.number) == [1, 2, 3])
        #expect(pending.map(\.scene) == [a, b, a])
        // The contents are in the file, not in memory, and are read back from it.
        #expect(pending.allSatisfy { $0.bytes == nil && $0.line != nil })
        let contents = try reopened.contents(of: pending)
        #expect(contents[0] == Array("[1]".utf8))
        #expect(contents[1] == [0, 0xFF, 0x0A, 0x22])
        #expect(pending[1].format == .codable)
        #expect(pending[1].origin == client("app"))
        #expect(contents[2] == nil && pending[2].deleted)
        #expect(reopened.snapshot.pendingCounts == [a: 2, b: 1])
        #expect(reopened.hasPendingChanges(a))
    }

    @Test func pushNumbersAreNeverReusedAfterAReopen() throws {
        let a = try scene("a")
        var stream = ""
        do {
            let journal = try ReplicationJournal(directory: directory)
            stream = journal.snapshot.stream
            journal.recordLocal(scene: a, bytes: Array("[1]".utf8), format: .array, origin: .file)
            journal.recordLocal(scene: a, bytes: Array("[2]".utf8), format: .array, origin: .file)
            // Both pushed: nothing is pending any more, yet their numbers stay taken.
            journal.recordPushed([
                .init(number: 1, scene: a, seq: 1, version: 1, digest: SceneStore.digest(Array("[1]".utf8))),
                .init(number: 2, scene: a, seq: 2, version: 2, digest: SceneStore.digest(Array("[2]".utf8))),
            ])
            #expect(journal.snapshot.pending.isEmpty)
            journal.writeQueued()
        }
        let reopened = try ReplicationJournal(directory: directory)
        #expect(reopened.snapshot.stream == stream)
        let next = try #require(
            reopened.recordLocal(scene: a, bytes: Array("[3]".utf8), format: .array, origin: .file))
        #expect(next.number == 3)
        reopened.writeQueued()
        // A second reopen, after the compaction of the first, still knows.
        let again = try ReplicationJournal(directory: directory)
        #expect(again.snapshot.pending.map(\.number) == [3])
        #expect(again.recordLocal(scene: a, bytes: Array("[4]".utf8), format: .array, origin: .file)?.number == 4)
    }

    @Test func aTornLastLineIsIgnoredAtReplay() throws {
        let a = try scene("a")
        do {
            let journal = try ReplicationJournal(directory: directory)
            journal.recordLocal(scene: a, bytes: Array("[1]".utf8), format: .array, origin: .file)
            journal.recordLocal(scene: a, bytes: Array("[2]".utf8), format: .array, origin: .file)
            journal.writeQueued()
        }
        // A crash in the middle of the third write.
        let handle = try #require(FileHandle(forWritingAtPath: path))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(#"{"t":"local","n":3,"scene":"a","format":"arr"#.utf8))
        try handle.close()

        let reopened = try ReplicationJournal(directory: directory)
        #expect(reopened.snapshot.pending.map(\.number) == [1, 2])
        #expect(try reopened.contents(of: Array(reopened.snapshot.pending)) == [Array("[1]".utf8), Array("[2]".utf8)])
        // The torn line is gone from the rewritten file, and appending goes on after it.
        #expect(try lines().allSatisfy { (try? JSONParser.parse(Array($0.utf8))) != nil })
        #expect(reopened.recordLocal(scene: a, bytes: nil, format: .array, origin: .file)?.number == 3)
    }

    @Test func aTornLastLineIsReportedAsSkippedNotAsDamage() throws {
        do {
            let journal = try ReplicationJournal(directory: directory)
            journal.recordLocal(scene: try scene("a"), bytes: Array("[1]".utf8), format: .array, origin: .file)
            journal.writeQueued()
        }
        // A power loss can leave the tail as NUL bytes instead of a cut line.
        let handle = try #require(FileHandle(forWritingAtPath: path))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(repeating: 0, count: 40))
        try handle.close()
        let reopened = try ReplicationJournal(directory: directory)
        #expect(reopened.damage == nil)
        #expect(reopened.skippedTornLine)
        #expect(reopened.snapshot.pending.map(\.number) == [1])
        #expect(reopened.isWritten())
    }

    /// The edges of "torn": only a last line that does not parse, after others, is one.
    @Test func onlyALastLineThatDoesNotParseAfterOthersIsTorn() throws {
        do { _ = try ReplicationJournal(directory: directory) }
        let whole = try lines()
        func reopen(_ text: String) throws -> ReplicationJournal {
            try Data(text.utf8).write(to: URL(fileURLWithPath: path))
            return try ReplicationJournal(directory: directory)
        }
        let base = whole.joined(separator: "\n") + "\n"
        // A whole last line without its newline is applied.
        let unterminated = try reopen(base + #"{"t":"done","seq":7}"#)
        #expect(unterminated.damage == nil && !unterminated.skippedTornLine)
        #expect(unterminated.snapshot.cursor == 7)
        // A last line that parses but is no journal line is damage, not a torn append.
        #expect(try reopen(base + #"{"t":"mystery"}"#).damage?.line == whole.count + 1)
        // A file whose only line is cut is damage: the first lines are always written whole.
        #expect(try reopen(#"{"t":"stream","id":"#).damage?.line == 1)
    }

    /// Damage anywhere but the last line: the replay stops there, the file is left byte for byte as it was, and
    /// the journal refuses to be written, so nothing is pushed.
    @Test(arguments: [
        ("not json\n", "line 3: not JSON"),
        ("\n", "line 3: an empty line"),
        (#"{"t":"local","n":7}"# + "\n", "line 3: a local change without its scene, number or format"),
        (#"{"t":"mystery"}"# + "\n", "line 3: not a journal line"),
        (
            #"{"t":"local","n":7,"scene":"a","format":"array","content":"zz"}"# + "\n",
            "line 3: a local change whose content is not hex"
        ),
    ])
    func damageBeforeTheLastLineStopsTheJournalAndKeepsTheFile(inserted: String, named: String) throws {
        let a = try scene("a")
        do {
            let journal = try ReplicationJournal(directory: directory)
            journal.recordLocal(scene: a, bytes: Array("[1]".utf8), format: .array, origin: .file)
            journal.recordLocal(scene: a, bytes: Array("[2]".utf8), format: .array, origin: .file)
            journal.writeQueued()
        }
        var fileLines = try lines()
        #expect(fileLines.count == 4)
        fileLines.insert(String(inserted.dropLast()), at: 2)
        let damaged = Data((fileLines.joined(separator: "\n") + "\n").utf8)
        try damaged.write(to: URL(fileURLWithPath: path))

        let reopened = try ReplicationJournal(directory: directory)
        #expect(reopened.damage?.description.hasPrefix(named) == true, "\(String(describing: reopened.damage))")
        #expect(!reopened.isWritten())
        #expect(reopened.recordLocal(scene: a, bytes: nil, format: .array, origin: .file) != nil)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == damaged)
    }

    /// A write-back error found by the background flush (played here) counts as a failed append: nothing is pushed
    /// until the file is rewritten whole, and the rewrite holds every pending change.
    @Test func aFailedFlushStopsPushingUntilTheFileIsRewritten() throws {
        let a = try scene("a")
        let journal = try ReplicationJournal(directory: directory)
        journal.recordLocal(scene: a, bytes: Array("[1]".utf8), format: .array, origin: .file)
        journal.writeQueued()
        #expect(journal.syncAppends())
        #expect(!journal.syncAppends(failing: true))
        // Failed: nothing more is queued for the file, and the next flush has nothing to do until the rewrite.
        journal.recordLocal(scene: a, bytes: Array("[2]".utf8), format: .array, origin: .file)
        #expect(journal.lacksLines)
        #expect(try lines().count == 3)
        #expect(journal.syncAppends())
        #expect(journal.isWritten())
        let reopened = try ReplicationJournal(directory: directory)
        #expect(reopened.snapshot.pending.map(\.number) == [1, 2])
    }

    /// A backlog costs memory per change, not per byte: once a change's line is in the file, only where it is
    /// stays in memory. A change whose append failed keeps its content in memory until the rewrite puts it in the
    /// new file; every content reads back the same throughout.
    @Test func pendingContentsLiveInTheFileOnceWritten() throws {
        let a = try scene("a")
        let journal = try ReplicationJournal(directory: directory)
        let big = [UInt8](repeating: UInt8(ascii: "x"), count: 10_000)
        journal.recordLocal(scene: a, bytes: big, format: .array, origin: .file)
        // Queued: in memory until the writer has put its line in the file.
        #expect(journal.snapshot.pending.first?.bytes == big)
        #expect(journal.snapshot.pending.first?.line == nil)
        journal.writeQueued()
        #expect(journal.snapshot.pending.first?.bytes == nil)
        #expect(journal.snapshot.pending.first?.line != nil)

        #expect(!journal.syncAppends(failing: true))  // from now on nothing is written until the rewrite
        journal.recordLocal(scene: a, bytes: Array("[2]".utf8), format: .array, origin: .file)
        #expect(journal.snapshot.pending.last?.bytes == Array("[2]".utf8))
        #expect(try journal.contents(of: Array(journal.snapshot.pending)) == [big, Array("[2]".utf8)])

        #expect(journal.isWritten())
        #expect(journal.snapshot.pending.allSatisfy { $0.bytes == nil && $0.line != nil })
        #expect(try journal.contents(of: Array(journal.snapshot.pending)) == [big, Array("[2]".utf8)])
        journal.recordPushed(1, scene: a, seq: 1, version: 1, digest: 0)
        #expect(try journal.contents(of: Array(journal.snapshot.pending)) == [Array("[2]".utf8)])
    }

    @Test func aReopenCompactsTheFileToItsState() throws {
        let a = try scene("a")
        let b = try scene("b")
        do {
            let journal = try ReplicationJournal(directory: directory)
            for value in 1...50 {
                journal.recordLocal(scene: a, bytes: Array("[\(value)]".utf8), format: .array, origin: .file)
            }
            journal.recordPushed(
                (1...49).map {
                    .init(
                        number: UInt64($0), scene: a, seq: Int64($0), version: Int64($0),
                        digest: SceneStore.digest(Array("[\($0)]".utf8)))
                })
            journal.recordReceived(seq: 60, scene: b, digest: 77)
            journal.recordDone(seq: 60, scene: b, version: 5)
            journal.writeQueued()
            #expect(try lines().count > 50)
        }
        let reopened = try ReplicationJournal(directory: directory)
        // A stream line, a state line, and the one change still pending.
        let compact = try lines()
        #expect(compact.count == 3)
        #expect(compact[0].contains(#""t":"stream""#))
        #expect(compact[1].contains(#""t":"state""#))
        #expect(compact[2].contains(#""t":"local""#))
        let state = reopened.snapshot
        #expect(state.pending.map(\.number) == [50])
        #expect(state.cursor == 60)
        #expect(state.applied == [a: 49, b: 5])
        #expect(state.digests == [a: SceneStore.digest(Array("[49]".utf8)), b: 77])
        #expect(state.ownSeqs == [a: 49])
        #expect(state.nextNumber == 51)
    }

    @Test func recordPushedAndRecordDoneKeepTheBookkeeping() throws {
        let a = try scene("a")
        let b = try scene("b")
        let journal = try ReplicationJournal(directory: directory)
        journal.recordLocal(scene: a, bytes: Array("[1]".utf8), format: .array, origin: .file)
        journal.recordLocal(scene: b, bytes: Array("[2]".utf8), format: .array, origin: .file)
        journal.recordLocal(scene: a, bytes: nil, format: .array, origin: .file)
        #expect(journal.snapshot.pendingCounts == [a: 2, b: 1])

        // Out of order and unknown numbers are handled by number, not position.
        journal.recordPushed(2, scene: b, seq: 10, version: 3, digest: 22)
        journal.recordPushed(99, scene: b, seq: 11, version: 4, digest: 23)
        var state = journal.snapshot
        #expect(state.pending.map(\.number) == [1, 3])
        #expect(state.pendingCounts == [a: 2])
        #expect(state.applied[b] == 3)
        #expect(state.ownSeqs[b] == 10)
        #expect(state.digests[b] == 22)

        // "unchanged": no sequence and no version; the scene's base stays what it was.
        journal.recordDone(seq: 4, scene: a, version: 7)
        journal.recordPushed(1, scene: a, seq: 0, version: 0, digest: 11)
        state = journal.snapshot
        #expect(state.pendingCounts == [a: 1])
        #expect(state.applied[a] == 7)
        #expect(state.ownSeqs[a] == nil)
        #expect(state.digests[a] == 11)
        #expect(journal.hasPendingChanges(a))

        // A done without a scene only moves the cursor, which never goes back.
        journal.recordDone(seq: 3, scene: nil, version: nil)
        #expect(journal.snapshot.cursor == 4)
        journal.recordDone(seq: 5, scene: b, version: 9)
        #expect(journal.snapshot.cursor == 5)
        #expect(journal.snapshot.applied[b] == 9)

        // A local change that repeats what the database holds, with nothing pending, is not pushed back.
        journal.recordPushed(3, scene: a, seq: 12, version: 8, digest: 0)
        #expect(!journal.hasPendingChanges(a))
        journal.recordReceived(seq: 13, scene: b, digest: SceneStore.digest(Array("[9]".utf8)))
        #expect(journal.recordLocal(scene: b, bytes: Array("[9]".utf8), format: .array, origin: .file) == nil)
        #expect(journal.recordLocal(scene: b, bytes: Array("[10]".utf8), format: .array, origin: .file) != nil)
    }

    @Test func aPushedBatchMovesTheCursorOverOwnSequencesThatFollowIt() throws {
        let a = try scene("a")
        let b = try scene("b")
        let journal = try ReplicationJournal(directory: directory)
        for value in 1...4 {
            journal.recordLocal(scene: value % 2 == 0 ? a : b, bytes: [UInt8(value)], format: .array, origin: .file)
        }
        journal.recordDone(seq: 10, scene: nil, version: nil)
        // Sequences 11 and 12 are this host's: the feed has nothing to read up to 12.
        journal.recordPushed([
            .init(number: 1, scene: b, seq: 11, version: 1, digest: 1),
            .init(number: 2, scene: a, seq: 12, version: 1, digest: 2),
        ])
        #expect(journal.snapshot.cursor == 12)
        #expect(!journal.needsCatchUp(to: 12))
        #expect(journal.needsCatchUp(to: 13))

        // Another host committed 13 meanwhile: this host's 14 and 15 wait behind the gap.
        journal.recordPushed([
            .init(number: 3, scene: b, seq: 14, version: 3, digest: 3),
            .init(number: 4, scene: a, seq: 15, version: 2, digest: 4),
        ])
        #expect(journal.snapshot.cursor == 12)
        #expect(journal.snapshot.ownAhead == [14, 15])
        #expect(journal.needsCatchUp(to: 15))
        // Once the feed applied 13, the cursor passes the own ones too.
        journal.recordDone(seq: 13, scene: b, version: 2)
        #expect(journal.snapshot.cursor == 15)
        #expect(journal.snapshot.ownAhead.isEmpty)
        #expect(journal.snapshot.applied[b] == 2)

        // The cursor moved over own sequences is durable, as a done line.
        journal.writeQueued()
        let reopened = try ReplicationJournal(directory: directory)
        #expect(reopened.snapshot.cursor == 15)
        #expect(reopened.snapshot.pending.isEmpty)
        #expect(reopened.snapshot.ownSeqs == [a: 15, b: 14])
    }

    @Test func aCatchUpFromStatePassesOwnSequencesBelowIt() throws {
        let a = try scene("a")
        let journal = try ReplicationJournal(directory: directory)
        journal.recordLocal(scene: a, bytes: [1], format: .array, origin: .file)
        journal.recordPushed([.init(number: 1, scene: a, seq: 8, version: 3, digest: 1)])
        #expect(journal.snapshot.cursor == 0)
        #expect(journal.snapshot.ownAhead == [8])
        journal.recordDone(seq: 20, scene: nil, version: nil)
        #expect(journal.snapshot.cursor == 20)
        #expect(journal.snapshot.ownAhead.isEmpty)
    }

    @Test func aBatchAnswerIsWrittenInOneWriteAndReplaysEqually() throws {
        let a = try scene("a")
        let journal = try ReplicationJournal(directory: directory)
        for value in 1...300 {
            journal.recordLocal(scene: a, bytes: Array("[\(value)]".utf8), format: .array, origin: .file)
        }
        journal.writeQueued()
        let before = try lines().count
        journal.recordPushed(
            (1...256).map {
                .init(number: UInt64($0), scene: a, seq: Int64($0), version: Int64($0), digest: UInt64($0))
            })
        // One pushed line per change and one done line for the cursor.
        journal.writeQueued()
        #expect(try lines().count == before + 257)
        let live = journal.snapshot
        let reopened = try ReplicationJournal(directory: directory).snapshot
        // The same changes; only where their lines are differs, since the reopened file is compact.
        let unplaced = { (pending: ReplicationJournal.Pending) -> ReplicationJournal.Pending in
            var copy = pending
            copy.line = nil
            return copy
        }
        #expect(reopened.pending.map(unplaced) == live.pending.map(unplaced))
        #expect(reopened.pending.first?.number == 257)
        #expect(reopened.cursor == 256)
        #expect(reopened.applied == live.applied)
        #expect(reopened.digests == live.digests)
        #expect(reopened.ownSeqs == live.ownSeqs)
        #expect(reopened.pendingCounts == live.pendingCounts)
    }

    /// Appends are not synced, so a power loss can take the file's tail: push numbers the database may hold. A
    /// start in another boot must hand out none of them again, or the database would drop new changes as duplicates.
    @Test func aStartInAnotherBootSkipsEveryNumberALostTailCouldHaveUsed() throws {
        let a = try scene("a")
        do {
            let journal = try ReplicationJournal(directory: directory, boot: "first")
            for value in 1...3 {
                journal.recordLocal(scene: a, bytes: [UInt8(value)], format: .array, origin: .file)
            }
            journal.writeQueued()
        }
        // The power went: only what the start synced (the stream and state lines) and the first append remain.
        let kept = try lines().prefix(3)
        #expect(kept.last?.contains(#""n":1"#) == true)
        try (kept.joined(separator: "\n") + "\n").write(toFile: path, atomically: false, encoding: .utf8)

        let rebooted = try ReplicationJournal(directory: directory, boot: "second")
        #expect(rebooted.snapshot.pending.map(\.number) == [1])
        let next = try #require(rebooted.recordLocal(scene: a, bytes: [9], format: .array, origin: .file))
        #expect(next.number == 2 + ReplicationJournal.numbersSkippedAfterABoot)
        #expect(rebooted.snapshot.boot == "second")
        rebooted.writeQueued()

        // Restarts within that boot (a crash loses no append) keep counting from there.
        let restarted = try ReplicationJournal(directory: directory, boot: "second")
        #expect(restarted.snapshot.pending.map(\.number) == [1, 2 + ReplicationJournal.numbersSkippedAfterABoot])
        #expect(
            restarted.recordLocal(scene: a, bytes: [10], format: .array, origin: .file)?.number
                == 3 + ReplicationJournal.numbersSkippedAfterABoot)
    }

    @Test func aFirstStartAndRestartsInOneBootSkipNoNumbers() throws {
        let a = try scene("a")
        let fresh = try ReplicationJournal(directory: directory, boot: "only")
        #expect(fresh.recordLocal(scene: a, bytes: [1], format: .array, origin: .file)?.number == 1)
        fresh.writeQueued()
        let restarted = try ReplicationJournal(directory: directory, boot: "only")
        #expect(restarted.recordLocal(scene: a, bytes: [2], format: .array, origin: .file)?.number == 2)
        #expect(try lines().first?.contains(#""boot":"only""#) == true)
    }

    /// A full disk fails a write: the numbers it carried exist only in memory. The journal then says it is not
    /// written (so the replicator pushes nothing), writes nothing more (a torn line followed by good ones would
    /// lose one), and once there is space it rewrites the whole state: every number is in the file again.
    @Test(.enabled(if: getuid() == 0, "mounting a small tmpfs needs root"))
    func aFullDiskHoldsThePushesUntilTheFileHasEveryNumberAgain() async throws {
        let small = directory + "/small"
        try FileManager.default.createDirectory(atPath: small, withIntermediateDirectories: false)
        try await Self.run("/bin/mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", small])
        // Unmounted at the end; on a failure before it, here (lazily, so that nothing still open can keep it).
        defer { Self.unmountLazily(small) }
        let a = try scene("a")
        let journal = try ReplicationJournal(directory: small, boot: "one")
        #expect(journal.recordLocal(scene: a, bytes: [1], format: .array, origin: .file)?.number == 1)
        #expect(journal.isWritten())

        // Fill the file system, then write until the journal's last page is full too.
        let filler = small + "/filler"
        let fd = open(filler, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        try #require(fd >= 0)
        var byte: UInt8 = 0x78
        let chunk = [UInt8](repeating: 0x78, count: 4096)
        while chunk.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) > 0 {}
        while write(fd, &byte, 1) > 0 {}
        close(fd)
        var numbers: [UInt64] = [1]
        while journal.isWritten(), numbers.count < 10_000 {
            numbers.append(
                try #require(journal.recordLocal(scene: a, bytes: [2], format: .array, origin: .file)).number)
        }
        #expect(!journal.isWritten(), "no write failed")
        let sizeWhenFull = try #require(
            try FileManager.default.attributesOfItem(atPath: path(in: small))[.size] as? Int)
        numbers.append(try #require(journal.recordLocal(scene: a, bytes: [3], format: .array, origin: .file)).number)
        #expect(!journal.isWritten())
        #expect(try FileManager.default.attributesOfItem(atPath: path(in: small))[.size] as? Int == sizeWhenFull)

        try FileManager.default.removeItem(atPath: filler)
        #expect(journal.isWritten())
        #expect(
            journal.recordLocal(scene: a, bytes: [4], format: .array, origin: .file)?.number
                == UInt64(numbers.count + 1))
        journal.writeQueued()
        let reopened = try ReplicationJournal(directory: small, boot: "one")
        #expect(reopened.snapshot.pending.map(\.number) == numbers + [UInt64(numbers.count + 1)])
        try await Self.run("/bin/umount", ["-l", small])
    }

    func path(in directory: String) -> String { directory + "/cluster-journal" }

    /// Runs a tool to its end without holding a thread of the pool while it runs.
    static func run(_ tool: String, _ arguments: [String]) async throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        let status: Int32 = try await withCheckedThrowingContinuation { continuation in
            process.terminationHandler = { continuation.resume(returning: $0.terminationStatus) }
            do {
                try process.run()
            } catch {
                process.terminationHandler = nil
                continuation.resume(throwing: error)
            }
        }
        guard status == 0 else { throw POSIXError(.EIO) }
    }

    /// `umount -l`, not waited for (a `defer` cannot wait): the way out of a test that failed before its own.
    static func unmountLazily(_ path: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/umount")
        process.arguments = ["-l", path]
        try? process.run()
    }

    @Test func theBootIDIsTheKernels() throws {
        let boot = ReplicationJournal.currentBoot()
        let kernel = try String(contentsOfFile: "/proc/sys/kernel/random/boot_id", encoding: .utf8)
        #expect(boot == kernel.trimmingCharacters(in: .newlines))
        #expect(boot.count == 36)
    }
}

extension ReplicationJournal {
    func hasPendingChanges(_ scene: SceneID) -> Bool { withState { $0.pendingCounts[scene, default: 0] > 0 } }
}
