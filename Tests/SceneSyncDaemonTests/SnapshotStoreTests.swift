import Foundation
import Glibc
import SceneSyncCore
import Synchronization
import Testing

@testable import SceneSyncDaemon

/// Snapshots written in pieces (§5): the file is the document ``Snapshot/encode()`` makes, however it was cut, and
/// a write that fails between pieces leaves the snapshots already there as they were, and no temp file.
@Suite struct SnapshotStoreTests {
    /// `count` scenes of about 40 bytes each, created in an order that is not their IDs'.
    static func store(scenes count: Int, revision: UInt64) throws -> SceneStore {
        var store = SceneStore(epoch: "e", revision: revision)
        for index in (0..<count).reversed() {
            let decoded = try SceneFileCodec().decode(Array(#"[{"n":\#(index)},"r\#(revision)"]"#.utf8))
            store.restore(
                SceneState(
                    id: scene("s\(index)"), version: 1, created: 1, modified: revision, format: .array,
                    path: decoded.path, layout: decoded.layout))
        }
        return store
    }

    /// What a stand-in writer saw, for the test to read afterwards.
    final class Seen: Sendable {
        /// The size of each piece it was handed.
        let pieces = Mutex<[Int]>([])
        /// The temp file's size when the stand-in failed a write, -1 before.
        let tornSize = Mutex(-1)
    }

    /// `write(2)` that notes the size of each piece it is handed.
    static func counting(_ seen: Seen) -> FileSystem.PieceWriter {
        FileSystem.PieceWriter { fd, piece in
            seen.pieces.withLock { $0.append(piece.count) }
            return FileSystem.PieceWriter.system.write(fd, piece)
        }
    }

    @Test func aSnapshotWrittenInPiecesIsTheDocumentInOne() throws {
        let directory = try FileReplaceTests.Directory()
        defer { directory.remove() }
        let store = try Self.store(scenes: 200, revision: 5)
        let seen = Seen()
        // Pieces of about 256 bytes, writeback started every 1 KiB or so.
        let snapshots = SnapshotStore(
            directory: directory.path, pieceBytes: 256, writebackBytes: 1_024, writer: Self.counting(seen))
        let written = try snapshots.write(store.snapshotEncoder(time: "t", reason: .request), keep: 3)

        let expected = Snapshot(epoch: "e", revision: 5, time: "t", reason: .request, scenes: store.scenes).encode()
        #expect(try FileSystem.read(written.path) == expected)
        #expect(written.bytes == expected.count)
        #expect(written.scenes == 200)
        #expect(written.path == directory.path(Snapshot.fileName(revision: 5)))
        #expect(directory.names == [Snapshot.fileName(revision: 5)])
        let sizes = seen.pieces.withLock { $0 }
        #expect(sizes.count > 20, "\(sizes.count) pieces")
        #expect(sizes.reduce(0, +) == expected.count)
        // Each piece passes 256 bytes by less than one entry of this store (about 100 bytes).
        #expect(sizes.allSatisfy { $0 < 256 + 128 }, "\(sizes)")
    }

    @Test func aWriteThatFailsBetweenPiecesLeavesTheOldSnapshotAndNoTempFile() throws {
        let directory = try FileReplaceTests.Directory()
        defer { directory.remove() }
        let old = try SnapshotStore(directory: directory.path)
            .write(try Self.store(scenes: 50, revision: 1).snapshotEncoder(time: "t", reason: .request), keep: 3)
        let oldBytes = try FileSystem.read(old.path)

        // The fourth piece finds the disk full, with three pieces in the temp file: a torn snapshot, if it stayed.
        let seen = Seen()
        let fullDisk = FileSystem.PieceWriter { fd, piece in
            let call = seen.pieces.withLock { pieces in
                pieces.append(piece.count)
                return pieces.count
            }
            guard call >= 4 else { return FileSystem.PieceWriter.system.write(fd, piece) }
            var info = stat()
            seen.tornSize.withLock { $0 = fstat(fd, &info) == 0 ? Int(info.st_size) : -1 }
            return ENOSPC
        }
        let snapshots = SnapshotStore(
            directory: directory.path, pieceBytes: 256, writebackBytes: 512, writer: fullDisk)
        let encoder = try Self.store(scenes: 200, revision: 2).snapshotEncoder(time: "t", reason: .request)
        let error = #expect(throws: SystemError.self) { try snapshots.write(encoder, keep: 1) }
        #expect(error?.operation == "write")
        #expect(error?.errno == ENOSPC)
        #expect(seen.pieces.withLock { $0.count } == 4, "the write stops at the failed piece")
        #expect(seen.tornSize.withLock { $0 } >= 3 * 256)

        #expect(directory.names == [Snapshot.fileName(revision: 1)])
        #expect(try FileSystem.read(old.path) == oldBytes)
        let loaded = SnapshotStore(directory: directory.path).loadNewest()
        #expect(loaded.loaded?.snapshot.revision == 1)
        #expect(loaded.skipped.isEmpty)
    }
}
