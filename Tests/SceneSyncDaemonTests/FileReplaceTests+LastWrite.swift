import Foundation
import Glibc
import SceneSyncCore
import Testing

@testable import SceneSyncDaemon

/// The daemon's own last write of a scene file, displaced unchanged by its next one, is known without a read;
/// anything else in its place is read, as every displaced file was.
extension FileReplaceTests {
    /// Writes `text` as the daemon does and returns what it knows of that write.
    private func daemonWrites(
        _ text: String, at path: String, after lastWrite: WrittenFile? = nil
    ) throws -> (
        displaced: FileSystem.Displaced, written: WrittenFile
    ) {
        let tempPath = FileSystem.parentDirectory(of: path) + "/" + Self.temp
        let replaced = try FileSystem.replace(
            path, with: Self.bytes(text), tempPath: tempPath, readLimit: 100, after: lastWrite)
        let stamp = try #require(replaced.written)
        return (replaced.displaced, WrittenFile(stamp: stamp, bytes: Self.bytes(text)))
    }

    @Test func theDaemonsOwnUnchangedFileIsNotReadBack() throws {
        let directory = try Directory()
        defer { directory.remove() }
        let path = directory.path("a.json")
        let first = try daemonWrites("[1]", at: path)
        #expect(first.displaced == .none)
        // Bytes the file does not hold, with the file's own stamp: only a skipped read hands these back.
        var claimed = first.written
        claimed.bytes = Self.bytes("[9]")
        let second = try daemonWrites("[2]", at: path, after: claimed)
        #expect(second.displaced == .file(Self.bytes("[9]")))
        #expect(directory.read("a.json") == "[2]")
        #expect(directory.names == ["a.json"])
    }

    @Test func aFileRewrittenInPlaceIsRead() throws {
        let directory = try Directory()
        defer { directory.remove() }
        let path = directory.path("a.json")
        let first = try daemonWrites("[1]", at: path)
        // An app rewrites it in place, same size; its modification time moves, as any write's does.
        let fd = open(path, O_WRONLY | O_TRUNC)
        #expect(fd >= 0)
        #expect(write(fd, "[3]", 3) == 3)
        var later = [timespec(tv_sec: 1_000_000, tv_nsec: 0), timespec(tv_sec: 2_000_000_000, tv_nsec: 0)]
        #expect(futimens(fd, &later) == 0)
        close(fd)
        #expect(try daemonWrites("[2]", at: path, after: first.written).displaced == .file(Self.bytes("[3]")))
    }

    @Test func aFileReplacedByAnAppIsRead() throws {
        let directory = try Directory()
        defer { directory.remove() }
        let path = directory.path("a.json")
        let first = try daemonWrites("[1]", at: path)
        try directory.write("app.tmp", "[4]")
        #expect(rename(directory.path("app.tmp"), path) == 0)
        #expect(try daemonWrites("[2]", at: path, after: first.written).displaced == .file(Self.bytes("[4]")))
    }

    @Test func aFileOfAnotherSizeIsRead() throws {
        let directory = try Directory()
        defer { directory.remove() }
        let path = directory.path("a.json")
        let first = try daemonWrites("[1]", at: path)
        let fd = open(path, O_WRONLY | O_APPEND)
        #expect(fd >= 0)
        #expect(write(fd, " ", 1) == 1)
        close(fd)
        // The time as the daemon's write left it: only the size tells.
        var same = [
            timespec(tv_sec: 1_000_000, tv_nsec: 0),
            timespec(
                tv_sec: Int(first.written.stamp.modified / 1_000_000_000),
                tv_nsec: Int(first.written.stamp.modified % 1_000_000_000)),
        ]
        #expect(utimensat(AT_FDCWD, path, &same, 0) == 0)
        #expect(try daemonWrites("[2]", at: path, after: first.written).displaced == .file(Self.bytes("[1] ")))
    }
}

/// Whether the daemon keeps its last writes at all depends on the file system's times.
@Suite struct LastWritesTests {
    @Test func lastWritesAreKeptOnlyWhereEveryWriteGetsATimeOfItsOwn() throws {
        let directory = try FileReplaceTests.Directory()
        defer { directory.remove() }
        let fine = LastWrites.timesAreFine(in: directory.path)
        let scene = try #require(SceneID("a"))
        let writes = LastWrites(directory: directory.path)
        var info = stat()
        info.st_ino = 7
        writes.wrote(WrittenFile(stamp: WrittenFile.Stamp(info), bytes: [1]), of: scene)
        #expect((writes.file(of: scene) != nil) == fine)
        writes.forget(scene)
        #expect(writes.file(of: scene) == nil)
        // The probe leaves nothing behind.
        #expect(directory.names.isEmpty)
    }

    @Test func atMostALimitedNumberOfLastWritesAreKept() throws {
        let directory = try FileReplaceTests.Directory()
        defer { directory.remove() }
        // Where the file system keeps times of the clock's tick, nothing is kept at all (see the test above).
        let kept = LastWrites.timesAreFine(in: directory.path) ? LastWrites.limit : 0
        let writes = LastWrites(directory: directory.path)
        let file = WrittenFile(stamp: WrittenFile.Stamp(stat()), bytes: [1])
        for index in 0..<(LastWrites.limit + 10) {
            writes.wrote(file, of: try #require(SceneID("s\(index)")))
        }
        #expect(writes.count == kept)
        let last = try #require(SceneID("s\(LastWrites.limit + 9)"))
        #expect((writes.file(of: last) != nil) == (kept > 0))
        // A scene already kept takes no room from another.
        writes.wrote(file, of: last)
        #expect(writes.count == kept)
    }
}
