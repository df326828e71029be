import SceneSyncCore
import Testing

@testable import SceneSyncReplication

/// A database row this host cannot fully read is still applied, and what it cannot read is named, never guessed.
@Suite struct RemoteChangeDecodingTests {
    static func row(
        origin: String = #"{"source":"client","client":"app","pid":7}"#, conflictContent: [UInt8]? = nil,
        conflictFormat: String? = nil, conflictOrigin: String? = nil
    ) -> ClusterReplicator.LogRow {
        ClusterReplicator.LogRow(
            seq: 9, scene: "a", version: 3, content: Array("[1]\n".utf8), format: "array", host: "B", stream: "t",
            origin: origin, conflictContent: conflictContent, conflictFormat: conflictFormat, conflictHost: "A",
            conflictOrigin: conflictOrigin)
    }

    func scene() throws -> SceneID { try #require(SceneID("a")) }

    @Test func aReadableRowHasNoProblems() throws {
        let (change, problems) = ClusterReplicator.remoteChange(
            Self.row(
                conflictContent: Array("[2]\n".utf8), conflictFormat: "array", conflictOrigin: #"{"source":"file"}"#),
            scene: try scene(), localHost: "A")
        #expect(problems.isEmpty)
        #expect(change.origin == Origin(source: .remote, client: "app", pid: 7, host: "B"))
        #expect(change.conflict?.path.count == 1)
        #expect(change.conflict?.origin == Origin(source: .file))
    }

    @Test func anOriginThatIsNotJSONIsNamedAndTheChangeStillApplies() throws {
        let (change, problems) = ClusterReplicator.remoteChange(
            Self.row(origin: "{not json"), scene: try scene(), localHost: "A")
        #expect(problems.count == 1)
        #expect(problems.first?.contains("origin is not JSON") == true)
        #expect(change.origin == Origin(source: .remote, host: "B"))
        #expect(change.fileBytes == Array("[1]\n".utf8))
    }

    @Test func aConflictThatDoesNotDecodeIsLeftOutNotEmptied() throws {
        let (change, problems) = ClusterReplicator.remoteChange(
            Self.row(conflictContent: Array("{broken".utf8), conflictFormat: "array"), scene: try scene(),
            localHost: "A")
        #expect(change.conflict == nil)
        #expect(problems.count == 1)
        #expect(problems.first?.contains("conflict's content does not decode") == true)
    }

    @Test func aConflictOfAnUnknownFormatOrOriginIsNamed() throws {
        let unknown = ClusterReplicator.remoteChange(
            Self.row(conflictContent: Array("[2]\n".utf8), conflictFormat: "yaml"), scene: try scene(), localHost: "A")
        #expect(unknown.change.conflict == nil)
        #expect(unknown.problems.first?.contains("format yaml is unknown") == true)

        let badOrigin = ClusterReplicator.remoteChange(
            Self.row(conflictContent: Array("[2]\n".utf8), conflictFormat: "array", conflictOrigin: "nope"),
            scene: try scene(), localHost: "B")
        #expect(badOrigin.change.conflict?.origin == Origin(source: .remote, host: "A"))
        #expect(badOrigin.problems.first?.contains("conflict's origin is not JSON") == true)
    }

    @Test func aConflictOriginWithAnUnknownSourceIsNamedNotGuessedSilently() throws {
        let (change, problems) = ClusterReplicator.remoteChange(
            Self.row(
                conflictContent: Array("[2]\n".utf8), conflictFormat: "array",
                conflictOrigin: #"{"source":"teleport"}"#),
            scene: try scene(), localHost: "A")
        #expect(change.conflict != nil)
        #expect(problems.first?.contains("no source this host knows") == true, "\(problems)")
    }
}
