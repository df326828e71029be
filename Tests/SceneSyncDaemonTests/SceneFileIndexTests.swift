import Foundation
import SceneSyncCore
import Testing

@testable import SceneSyncDaemon

#if canImport(Glibc)
import Glibc
#endif

/// The index of scene files a snapshot leaves for the next start: it is read back exactly or not at all, and it
/// trusts a file only when its last change is well before the moment everything was merged.
@Suite struct SceneFileIndexTests {
    static let stamp = SceneFileIndex.Stamp(
        device: 2049, inode: 1_234_567, size: 42, modified: 1_700_000_000_123_456_789,
        changed: 1_700_000_000_223_456_789, digest: 0xDEAD_BEEF_0000_0001)

    static let index = SceneFileIndex(
        epoch: "ep-1", revision: 77, codec: "auto 1048576 1024",
        files: [scene("main"): stamp, scene("side"): Stamp(stamp, inode: 9), scene("a.b-c_d"): Stamp(stamp, size: 0)])

    @Test func anIndexReadsBackAsItWasWritten() {
        #expect(SceneFileIndex.decode(Self.index.encode()) == Self.index)
        let empty = SceneFileIndex(epoch: "", revision: 0, codec: "", files: [:])
        #expect(SceneFileIndex.decode(empty.encode()) == empty)
    }

    @Test func aTornOrAlteredIndexIsNeverTakenForOne() {
        let bytes = Self.index.encode()
        for length in 0..<bytes.count {
            #expect(SceneFileIndex.decode(Array(bytes.prefix(length))) == nil, "cut to \(length) bytes")
        }
        for position in bytes.indices {
            var altered = bytes
            altered[position] ^= 0x01
            #expect(SceneFileIndex.decode(altered) == nil, "byte \(position) altered")
        }
        #expect(SceneFileIndex.decode(bytes + [0]) == nil)
    }

    @Test func aFileIsTrustedOnlyWhenItsLastChangeIsAMarginBeforeTheSettledMoment() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try Data("[1]".utf8).write(to: URL(fileURLWithPath: directory + "/main.json"))
        let written = try #require(SceneFileIndex.stamp(of: directory + "/main.json", digest: 5))
        let candidates = [(scene: scene("main"), digest: UInt64(5)), (scene: scene("gone"), digest: UInt64(6))]
        let latest = max(written.changed, written.modified)

        let tooSoon = SceneFileIndex.stamps(
            of: candidates, in: directory, settled: latest + SceneFileIndex.margin)
        #expect(tooSoon.isEmpty, "a change in the margin before the settled moment may not be merged")
        let later = SceneFileIndex.stamps(
            of: candidates, in: directory, settled: latest + SceneFileIndex.margin + 1)
        #expect(later == [scene("main"): written], "a file that is missing is left out")
    }

    @Test func aFileRewrittenInPlaceWithItsSizeAndModificationTimeKeptIsNotUnchanged() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/main.json"
        try Data("[1]".utf8).write(to: URL(fileURLWithPath: path))
        let stamp = try #require(SceneFileIndex.stamp(of: path, digest: 1))
        #expect(SceneFileIndex.isUnchanged(path, since: stamp))

        // Same size, same inode, the modification time put back: only the status-change time tells.
        let fd = open(path, O_WRONLY)
        try #require(fd >= 0)
        #expect(pwrite(fd, "[2]", 3, 0) == 3)
        close(fd)
        var times = [
            timespec(tv_sec: Int(stamp.modified / 1_000_000_000), tv_nsec: Int(stamp.modified % 1_000_000_000)),
            timespec(tv_sec: Int(stamp.modified / 1_000_000_000), tv_nsec: Int(stamp.modified % 1_000_000_000)),
        ]
        #expect(utimensat(AT_FDCWD, path, &times, 0) == 0)
        let after = try #require(SceneFileIndex.stamp(of: path, digest: 1))
        #expect(after.modified == stamp.modified && after.size == stamp.size && after.inode == stamp.inode)
        #expect(!SceneFileIndex.isUnchanged(path, since: stamp))
    }

    static func temporaryDirectory() throws -> String {
        var template = Array("/tmp/ssindex.XXXXXX".utf8CString)
        let created = try #require(mkdtemp(&template))
        return String(cString: created)
    }
}

extension SceneFileIndex.Stamp {
    /// `stamp` with one field changed.
    fileprivate init(_ stamp: Self, inode: UInt64? = nil, size: UInt64? = nil) {
        self = stamp
        if let inode { self.inode = inode }
        if let size { self.size = size }
    }
}

private typealias Stamp = SceneFileIndex.Stamp
