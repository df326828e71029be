import Foundation
import SceneSyncCore
import Testing

@testable import SceneSyncReplication

/// The stream record tells an emptied, removed or unusable journal from a first start (§9, "A damaged, emptied or
/// missing journal"): none of them throws, each is damage once the host replicated before.
extension ReplicationJournalTests {
    var recordPath: String { directory + "/cluster-stream" }

    @Test func aFirstStartWritesTheRecordAndLaterStartsAgreeWithIt() throws {
        let first = try ReplicationJournal(directory: directory)
        #expect(!first.replicatedBefore && first.damage == nil)
        let record = try String(contentsOfFile: recordPath, encoding: .utf8)
        #expect(record.contains("\"stream\":\"\(first.snapshot.stream)\""), "\(record)")
        let again = try ReplicationJournal(directory: directory)
        #expect(again.replicatedBefore && again.damage == nil)
        #expect(again.snapshot.stream == first.snapshot.stream)
    }

    /// A journal from before the record existed (an upgrade) is taken as it is, and recorded.
    @Test func aJournalWithoutARecordIsRecorded() throws {
        let stream = try ReplicationJournal(directory: directory).snapshot.stream
        try FileManager.default.removeItem(atPath: recordPath)
        let reopened = try ReplicationJournal(directory: directory)
        #expect(reopened.damage == nil && !reopened.replicatedBefore)
        #expect(try String(contentsOfFile: recordPath, encoding: .utf8).contains(stream))
    }

    @Test(arguments: ["empty", "missing", "directory", "other stream", "bad record"])
    func aJournalGoneOrUnusableAfterAStartIsDamage(kind: String) throws {
        do {
            let journal = try ReplicationJournal(directory: directory)
            journal.recordLocal(scene: try scene("a"), bytes: Array("[1]".utf8), format: .array, origin: .file)
            journal.writeQueued()
        }
        let expected: String
        switch kind {
        case "empty":
            try Data().write(to: URL(fileURLWithPath: path))
            expected = "the journal is empty, but this host replicated before"
        case "missing":
            try FileManager.default.removeItem(atPath: path)
            expected = "the journal is missing, but this host replicated before"
        case "directory":
            try FileManager.default.removeItem(atPath: path)
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
            expected = "the journal is not a regular file but a directory"
        case "other stream":
            try Data(#"{"stream":"elsewhere","next":1}"#.utf8).write(to: URL(fileURLWithPath: recordPath))
            expected = "the journal's stream"
        default:
            try Data("garbage".utf8).write(to: URL(fileURLWithPath: recordPath))
            expected = "the stream record"
        }
        let before = try? Data(contentsOf: URL(fileURLWithPath: path))
        let reopened = try ReplicationJournal(directory: directory)
        let damage = try #require(reopened.damage)
        #expect(damage.line == nil)
        #expect(damage.description.hasPrefix(expected), "\(damage)")
        #expect(!reopened.isWritten())
        // Whatever is there is left as it is.
        #expect((try? Data(contentsOf: URL(fileURLWithPath: path))) == before)
    }
}
