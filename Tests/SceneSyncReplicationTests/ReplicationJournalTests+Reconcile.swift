import Foundation
import SceneSyncCore
import Testing

@testable import SceneSyncReplication

/// The start's reconcile finds the changes whose `local` line a `SIGKILL` took and whose scene ended as the last
/// snapshot has it: each reopen below is such a start, the scenes given are what the start-up merge left.
extension ReplicationJournalTests {
    var contentA: [UInt8] { Array(#"["A"]"#.utf8) }
    var contentB: [UInt8] { Array(#"["B"]"#.utf8) }

    func pushed(_ journal: ReplicationJournal, _ scene: SceneID, _ bytes: [UInt8], seq: Int64) throws {
        let change = try #require(journal.recordLocal(scene: scene, bytes: bytes, format: .array, origin: .file))
        journal.recordPushed(
            change.number, scene: scene, seq: seq, version: seq, digest: SceneStore.digest(bytes))
    }

    func reconcile(_ scenes: [SceneID: [UInt8]]) throws -> [ReplicationJournal.Pending] {
        let journal = try ReplicationJournal(directory: directory)
        return journal.reconcile(holding: scenes.mapValues { ($0, .array) }, shares: { _ in true })
    }

    @Test func aSceneBackToAnOlderContentThanItsLastPushIsRecordedAgainAfterAReopen() throws {
        let flip = try scene("flip")
        do {
            let journal = try ReplicationJournal(directory: directory)
            try pushed(journal, flip, contentA, seq: 1)
            try pushed(journal, flip, contentB, seq: 2)
            journal.writeQueued()
        }
        // Twice: the first reopen rewrites the file compactly, and the second reads what this host held from it.
        #expect(try reconcile([flip: contentB]).isEmpty)
        #expect(try reconcile([flip: contentB]).isEmpty)
        let back = try reconcile([flip: contentA])
        #expect(back.map(\.scene) == [flip])
        #expect(back.first?.bytes == contentA && back.first?.origin == .file)
        let deleted = try reconcile([:])
        #expect(deleted.map(\.scene) == [flip] && deleted.first?.deleted == true)
        #expect(try ReplicationJournal(directory: directory).reconcile(holding: [:], shares: { _ in false }).isEmpty)
    }

    @Test func aRemoteChangeRefusedOrNotAppliedYetIsNoLostChange() throws {
        let refused = try scene("refused")
        let waiting = try scene("waiting")
        do {
            let journal = try ReplicationJournal(directory: directory)
            try pushed(journal, refused, contentA, seq: 1)
            try pushed(journal, waiting, contentA, seq: 2)
            // The database moves on to B for both; this host refused the first, and applied neither yet.
            journal.recordReceived([
                .init(seq: 3, scene: refused, digest: SceneStore.digest(contentB)),
                .init(seq: 4, scene: waiting, digest: SceneStore.digest(contentB)),
            ])
            journal.recordDone(seq: 3, scene: nil, version: nil)
            journal.writeQueued()
        }
        #expect(try reconcile([refused: contentA, waiting: contentA]).isEmpty)
        // The feed applies the waiting change again at the start, whatever the file holds now.
        #expect(try reconcile([refused: contentA, waiting: Array("[0]".utf8)]).isEmpty)
        // A content the database does not hold either is a change of this host.
        #expect(try reconcile([refused: Array("[0]".utf8), waiting: contentA]).map(\.scene) == [refused])
    }

    @Test func anAppliedRemoteChangeIsWhatTheHostHolds() throws {
        let remote = try scene("remote")
        do {
            let journal = try ReplicationJournal(directory: directory)
            // Two changes of one batch, the second refused: the file holds the first.
            journal.recordReceived([
                .init(seq: 1, scene: remote, digest: SceneStore.digest(contentA)),
                .init(seq: 2, scene: remote, digest: SceneStore.digest(contentB)),
            ])
            journal.recordDone([
                .init(seq: 1, scene: remote, version: 1, digest: SceneStore.digest(contentA)), .init(seq: 2),
            ])
            journal.writeQueued()
        }
        #expect(try reconcile([remote: contentA]).isEmpty)
        // What the database holds is never pushed back.
        #expect(try reconcile([remote: contentB]).isEmpty)
        #expect(try reconcile([remote: Array("[0]".utf8)]).map(\.scene) == [remote])
    }

    @Test func aSceneTheDatabaseNeverHadFromThisHostIsLeftToTheMerge() throws {
        let old = try scene("old")
        #expect(try reconcile([old: contentA]).isEmpty)
        #expect(try reconcile([old: contentA]).isEmpty)
    }

    @Test func aPendingSceneIsComparedWithItsLastPendingChange() throws {
        let flip = try scene("flip")
        do {
            let journal = try ReplicationJournal(directory: directory)
            journal.recordLocal(scene: flip, bytes: contentB, format: .array, origin: .file)
            journal.writeQueued()
        }
        #expect(try reconcile([flip: contentB]).isEmpty)
        let journal = try ReplicationJournal(directory: directory)
        let back = journal.reconcile(holding: [flip: (contentA, .array)], shares: { _ in true })
        #expect(back.map(\.number) == [2])
        #expect(journal.snapshot.pendingCounts[flip] == 2)
    }
}

/// The scenes a start must not write back from the snapshot: those the journal last saw this host hold deleted.
extension ReplicationJournalTests {
    @Test func scenesHeldDeletedAreThoseWhoseLastKnownStateIsADeletion() throws {
        let mine = try scene("mine")
        let theirs = try scene("theirs")
        let waiting = try scene("waiting")
        let kept = try scene("kept")
        do {
            let journal = try ReplicationJournal(directory: directory)
            for (index, id) in [mine, theirs, waiting, kept].enumerated() {
                try pushed(journal, id, contentA, seq: Int64(index + 1))
            }
            // This host deletes `mine`; another host's deletions of `theirs` (applied) and `waiting` (not yet).
            let deletion = try #require(journal.recordLocal(scene: mine, bytes: nil, format: .array, origin: .file))
            journal.recordReceived([.init(seq: 5, scene: theirs, digest: 0), .init(seq: 6, scene: waiting, digest: 0)])
            journal.recordDone([.init(seq: 5, scene: theirs, version: 2, digest: 0)])
            #expect(journal.scenesHeldDeleted(shares: { _ in true }) == [mine, theirs])
            journal.recordPushed(deletion.number, scene: mine, seq: 7, version: 2, digest: 0)
            journal.writeQueued()
        }
        let journal = try ReplicationJournal(directory: directory)
        #expect(journal.scenesHeldDeleted(shares: { _ in true }) == [mine, theirs])
        #expect(journal.scenesHeldDeleted(shares: { $0 != theirs }) == [mine])
    }
}
