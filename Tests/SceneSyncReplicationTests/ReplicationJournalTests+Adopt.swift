import Foundation
import SceneSyncCore
import Testing

@testable import SceneSyncReplication

/// The start's adoption (§9, recovery converges): every shared scene the journal knows nothing of is recorded, to be
/// settled with the database; a scene the journal knows, or one with a change pending, is not.
extension ReplicationJournalTests {
    @Test func aNewStreamAdoptsEveryScene() throws {
        let one = try scene("one")
        let two = try scene("two")
        let journal = try ReplicationJournal(directory: directory)
        let adopted = journal.adopt(holding: [one: (contentA, .array), two: (contentB, .array)])
        #expect(adopted.map(\.scene) == [one, two])
        #expect(adopted.allSatisfy { $0.origin == .file && !$0.deleted })
        #expect(journal.withState { $0.pending.count } == 2)
    }

    @Test func onlyScenesTheJournalKnowsNothingOfAreAdopted() throws {
        let known = try scene("known")
        let waiting = try scene("waiting")
        let created = try scene("created")
        do {
            let journal = try ReplicationJournal(directory: directory)
            try pushed(journal, known, contentA, seq: 1)
            journal.recordLocal(scene: waiting, bytes: contentA, format: .array, origin: .file)
            journal.writeQueued()
        }
        let journal = try ReplicationJournal(directory: directory)
        let adopted = journal.adopt(
            holding: [known: (contentB, .array), waiting: (contentB, .array), created: (contentA, .array)])
        #expect(adopted.map(\.scene) == [created])
    }

    @Test func aWithdrawnAdoptionLeavesTheOutboxAndStaysWithdrawnAfterAReopen() throws {
        let behind = try scene("behind")
        do {
            let journal = try ReplicationJournal(directory: directory)
            let adopted = journal.adopt(holding: [behind: (contentA, .array)])
            let change = try #require(adopted.first)
            journal.withdraw(change)
            #expect(journal.withState { $0.pending.isEmpty && $0.pendingCounts.isEmpty })
            journal.writeQueued()
        }
        let reopened = try ReplicationJournal(directory: directory)
        #expect(reopened.withState { $0.pending.isEmpty })
        // What this host held is known now: a later start adopts it no more.
        #expect(reopened.adopt(holding: [behind: (contentA, .array)]).isEmpty)
    }
}
