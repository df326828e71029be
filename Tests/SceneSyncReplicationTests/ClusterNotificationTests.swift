import Testing

@testable import SceneSyncReplication

/// The payload `push_batch` sends (see ClusterSchema): the feed applies the rows it carries without a query, so
/// decoding must give exactly the log's rows, or none.
@Suite struct ClusterNotificationTests {
    @Test func aSequenceAloneCarriesNoRows() {
        let (seq, rows) = ClusterReplicator.decodeNotification("42")
        #expect(seq == 42)
        #expect(rows.isEmpty)
    }

    @Test func anythingElseIsNoSequence() {
        #expect(ClusterReplicator.decodeNotification("").0 == nil)
        #expect(ClusterReplicator.decodeNotification("x 1").0 == nil)
    }

    @Test func rowsDecodeWithDeletionsAndConflicts() throws {
        // As PostgreSQL prints the jsonb that push_batch builds.
        let payload = """
            6 {"h": "B", "r": [{"c": "41", "f": "array", "o": "{}", "q": 5, "s": "a", "v": 3, "cc": "32", "cf": "array", \
            "ch": "A", "co": "{\\"source\\":\\"file\\"}"}, {"c": null, "f": "codable", "o": "{}", "q": 6, "s": "b", "v": 4, \
            "cc": null, "cf": null, "ch": null, "co": null}], "t": "t1"}
            """
        let (seq, rows) = ClusterReplicator.decodeNotification(payload)
        #expect(seq == 6)
        try #require(rows.count == 2)
        #expect(rows[0].seq == 5)
        #expect(rows[0].scene == "a")
        #expect(rows[0].version == 3)
        #expect(rows[0].content == [0x41])
        #expect(rows[0].host == "B")
        #expect(rows[0].stream == "t1")
        #expect(rows[0].conflictContent == [0x32])
        #expect(rows[0].conflictFormat == "array")
        #expect(rows[0].conflictHost == "A")
        #expect(rows[0].conflictOrigin == #"{"source":"file"}"#)
        #expect(rows[1].seq == 6)
        #expect(rows[1].content == nil)
        #expect(rows[1].format == "codable")
        #expect(rows[1].conflictContent == nil)
        #expect(rows[1].conflictHost == nil)
    }

    @Test func aRowThatDoesNotDecodeDropsThemAll() {
        let payload = #"7 {"h": "B", "t": "t1", "r": [{"c": "zz", "f": "array", "o": "{}", "q": 7, "s": "a", "v": 1}]}"#
        let (seq, rows) = ClusterReplicator.decodeNotification(payload)
        #expect(seq == 7)
        #expect(rows.isEmpty)
    }
}
