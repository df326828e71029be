import SceneSyncTestKit
import Testing

@testable import SceneSyncCore

/// A snapshot encoded in pieces, as the daemon writes it, is the document ``Snapshot/encode()`` makes, whatever the
/// pieces' size, and whether its scenes come from an array or straight from a store's entries.
@Suite("Snapshot in pieces")
struct SnapshotEncoderTests {
    /// The pieces of `encoder`'s document, each encoded into the emptied buffer of the one before, as the daemon
    /// does; and, once it said it was done, that asking again gives nothing more.
    static func pieces(_ encoder: SnapshotEncoder, upTo limit: Int) -> [[UInt8]] {
        var encoder = encoder
        var pieces: [[UInt8]] = []
        var buffer: [UInt8] = []
        var more = true
        while more {
            buffer.removeAll(keepingCapacity: true)
            more = encoder.encodeNext(into: &buffer, upTo: limit)
            pieces.append(buffer)
        }
        buffer.removeAll()
        #expect(!encoder.encodeNext(into: &buffer, upTo: limit))
        #expect(buffer.isEmpty, "a finished encoder appended \(buffer.count) bytes")
        return pieces
    }

    /// The fixtures' scenes and 300 more, in no order, IDs sharing prefixes of every length.
    static func snapshot() throws -> Snapshot {
        var scenes = try SnapshotTests.scenes()
        var random = SplitMix64(seed: 0x5A_0B)
        for index in 0..<300 {
            let prefix = ["w", "window.", "window.of.a.long.name.", "x-"][index % 4]
            let bytes = utf8(#"[{"n":\#(random.below(1_000_000))},"\#(String(repeating: "x", count: index % 40))"]"#)
            let decoded = try SceneFileCodec().decode(bytes)
            scenes.append(
                SceneState(
                    id: try sceneID(prefix + String(random.below(100_000))), version: 1, created: 1, modified: 2,
                    format: .array, path: decoded.path, layout: decoded.layout,
                    phase: index % 3 == 0 ? .background : nil))
        }
        var seen = Set<SceneID>()
        scenes = scenes.filter { seen.insert($0.id).inserted }
        return Snapshot(epoch: "e", revision: 77, time: "2026-11-21T08:46:35.123Z", reason: .phase, scenes: scenes)
    }

    @Test("pieces of any size make the document encode() makes, cut after whole entries")
    func anySize() throws {
        let snapshot = try Self.snapshot()
        let whole = snapshot.encode()
        // No limit: one piece. A limit of 0 or 1: one entry per piece (the header rides with the first one, the
        // document's end with the last).
        #expect(Self.pieces(snapshot.encoder(), upTo: .max) == [whole])
        let entries = Self.pieces(snapshot.encoder(), upTo: 0)
        #expect(entries.count == snapshot.scenes.count)
        #expect(Self.pieces(snapshot.encoder(), upTo: 1) == entries)
        #expect(Array(entries.joined()) == whole)
        let sorted = snapshot.scenes.map(\.id.rawValue).sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        for (entry, id) in zip(entries, sorted) {
            #expect(text(entry).contains(#"{"scene":"\#(id)","#), "\(id)")
        }
        // Any other limit: entries are added to a piece until it reaches the limit.
        for limit in [2, 100, 1_000, 4_096, whole.count - 1, whole.count, whole.count + 1] {
            var expected: [[UInt8]] = []
            var piece: [UInt8] = []
            for entry in entries {
                piece += entry
                if piece.count >= limit {
                    expected.append(piece)
                    piece = []
                }
            }
            if !piece.isEmpty { expected.append(piece) }
            let pieces = Self.pieces(snapshot.encoder(), upTo: limit)
            #expect(pieces == expected, "limit \(limit)")
            #expect(Array(pieces.joined()) == whole, "limit \(limit)")
        }
    }

    @Test("an empty snapshot is one piece, whatever the limit", arguments: [0, 1, 10, Int.max])
    func empty(_ limit: Int) {
        let snapshot = Snapshot(epoch: "e", revision: 0, time: "t", reason: .shutdown, scenes: [])
        #expect(Self.pieces(snapshot.encoder(), upTo: limit) == [snapshot.encode()])
    }

    @Test("a store's encoder reads its scenes from its entries, in byte order of their IDs")
    func fromStore() throws {
        let snapshot = try Self.snapshot()
        var random = SplitMix64(seed: 0xC0FFEE)
        var shuffled = snapshot.scenes
        for index in shuffled.indices.reversed() { shuffled.swapAt(index, random.below(index + 1)) }
        var store = SceneStore(epoch: "e", revision: 57)
        for scene in shuffled { store.restore(scene) }
        // A removal moves the last entry into the freed slot; the scenes removed come back at the end.
        for scene in shuffled.prefix(20) { #expect(store.applyFile(scene.id, bytes: nil) != .unchanged) }
        for scene in shuffled.prefix(20) { store.restore(scene) }
        #expect(store.revision == 77)
        let ids = snapshot.scenes.map(\.id).sorted { $0.rawValue.utf8.lexicographicallyPrecedes($1.rawValue.utf8) }
        #expect(store.scenes.map(\.id) == ids)
        let expected = snapshot.encode()
        for limit in [0, 500, Int.max] {
            let encoder = store.snapshotEncoder(time: "2026-11-21T08:46:35.123Z", reason: .phase)
            #expect(encoder.sceneCount == ids.count)
            #expect(Array(Self.pieces(encoder, upTo: limit).joined()) == expected, "limit \(limit)")
        }
    }
}
