import Foundation
import Glibc
import SceneSyncCore
import Testing

@testable import SceneSyncDaemon

/// The daemon's scene-file writes (§3): an exchange-rename that hands back what it displaced, a create that never
/// replaces, and the plain-rename fallback where the file system cannot do either.
@Suite struct FileReplaceTests {
    /// A fresh directory; removed by ``remove()``.
    struct Directory {
        let path: String

        init() throws {
            var template = Array((ConfigurationPath.normalized(NSTemporaryDirectory()) + "/ssr.XXXXXX").utf8CString)
            guard let created = mkdtemp(&template) else { throw POSIXError(.EIO) }
            path = String(cString: created)
        }

        func path(_ name: String) -> String { path + "/" + name }
        func remove() { try? FileManager.default.removeItem(atPath: path) }
        func write(_ name: String, _ text: String) throws {
            try Data(text.utf8).write(to: URL(fileURLWithPath: path(name)))
        }
        func read(_ name: String) -> String? {
            (try? Data(contentsOf: URL(fileURLWithPath: path(name)))).map { String(decoding: $0, as: UTF8.self) }
        }
        var names: [String] { ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted() }
    }

    static let temp = ".a.json.\(getpid()).tmp"

    static func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    /// With `relatime` (or `strictatime`), a read of a file whose access time is not newer than its modification
    /// time updates it: the daemon's reads must not, since each would be one more inode change.
    @Test func readingAFileLeavesItsAccessTimeAlone() throws {
        let directory = try Directory()
        defer { directory.remove() }
        try directory.write("a.json", "[1]")
        let path = directory.path("a.json")
        // An access time an hour before the modification time, which any access-time-keeping read would update.
        var times = [timespec(tv_sec: 1_000_000, tv_nsec: 0), timespec(tv_sec: 1_003_600, tv_nsec: 0)]
        #expect(utimensat(AT_FDCWD, path, &times, 0) == 0)
        #expect(try FileSystem.read(path) == Self.bytes("[1]"))
        var status = stat()
        #expect(stat(path, &status) == 0)
        #expect(status.st_atim.tv_sec == 1_000_000)
    }

    @Test func replacingHandsBackTheDisplacedFile() throws {
        let directory = try Directory()
        defer { directory.remove() }
        try directory.write("a.json", "[1]")
        let displaced = try FileSystem.replace(
            directory.path("a.json"), with: Self.bytes("[2]"), tempName: Self.temp, readLimit: 100)
        #expect(displaced == .file(Self.bytes("[1]")))
        #expect(directory.read("a.json") == "[2]")
        #expect(directory.names == ["a.json"])
    }

    /// `ENOENT` on the exchange: the file is created, and nothing was displaced.
    @Test func aMissingFileIsCreated() throws {
        let directory = try Directory()
        defer { directory.remove() }
        let displaced = try FileSystem.replace(
            directory.path("a.json"), with: Self.bytes("[2]"), tempName: Self.temp, readLimit: 100)
        #expect(displaced == .none)
        #expect(directory.read("a.json") == "[2]")
        #expect(directory.names == ["a.json"])
    }

    /// `EEXIST` on the create: an app made the file between the exchange that found none and the create. It is
    /// exchanged, not overwritten.
    @Test func aFileCreatedMeanwhileIsExchanged() throws {
        let directory = try Directory()
        defer { directory.remove() }
        let path = directory.path("a.json")
        // The app creates the file right before the daemon's create (RENAME_NOREPLACE); the exchange after it
        // finds the file, so this happens once.
        let racing = FileSystem.Renamer { from, to, flags in
            if flags == FileSystem.Renamer.noReplace, access(to, F_OK) != 0 {
                try? Data("[\"app\"]".utf8).write(to: URL(fileURLWithPath: to))
            }
            return FileSystem.Renamer.system.rename(from, to, flags)
        }
        // The first exchange finds no file; the app's file appears before the create.
        let displaced = try FileSystem.replace(
            path, with: Self.bytes("[2]"), tempName: Self.temp, readLimit: 100, renamer: racing)
        #expect(displaced == .file(Self.bytes("[\"app\"]")))
        #expect(directory.read("a.json") == "[2]")
        #expect(directory.names == ["a.json"])
    }

    /// `EINVAL` (a file system without `renameat2` flags): a plain rename, and the daemon cannot tell what it
    /// replaced.
    @Test func withoutExchangeAPlainRenameReplaces() throws {
        let directory = try Directory()
        defer { directory.remove() }
        try directory.write("a.json", "[1]")
        let unsupported = FileSystem.Renamer { from, to, flags in
            flags == 0 ? FileSystem.Renamer.system.rename(from, to, 0) : EINVAL
        }
        let displaced = try FileSystem.replace(
            directory.path("a.json"), with: Self.bytes("[2]"), tempName: Self.temp, readLimit: 100,
            renamer: unsupported)
        #expect(displaced == .unknown)
        #expect(directory.read("a.json") == "[2]")
        let created = try FileSystem.replace(
            directory.path("b.json"), with: Self.bytes("[3]"), tempName: Self.temp, readLimit: 100,
            renamer: unsupported)
        #expect(created == .unknown)
        #expect(
            try FileSystem.createExclusively(
                Self.bytes("[4]"), at: directory.path("c.json"), tempName: Self.temp, renamer: unsupported))
        #expect(directory.names == ["a.json", "b.json", "c.json"])
        #expect(directory.read("c.json") == "[4]")
    }

    @Test func removingHandsBackTheRemovedFile() throws {
        let directory = try Directory()
        defer { directory.remove() }
        try directory.write("a.json", "[1]")
        let removed = try FileSystem.replace(directory.path("a.json"), with: nil, tempName: Self.temp, readLimit: 100)
        #expect(removed == .file(Self.bytes("[1]")))
        #expect(directory.names == [])
        let missing = try FileSystem.replace(directory.path("a.json"), with: nil, tempName: Self.temp, readLimit: 100)
        #expect(missing == .none)
    }

    /// A directory named like a scene file is not one (§3): it is neither replaced nor removed.
    @Test func aDirectoryIsLeftAlone() throws {
        let directory = try Directory()
        defer { directory.remove() }
        try #require(mkdir(directory.path("a.json"), 0o755) == 0)
        #expect(throws: SystemError.self) {
            try FileSystem.replace(
                directory.path("a.json"), with: Self.bytes("[2]"), tempName: Self.temp, readLimit: 100)
        }
        #expect(throws: SystemError.self) {
            try FileSystem.replace(directory.path("a.json"), with: nil, tempName: Self.temp, readLimit: 100)
        }
        #expect(FileSystem.isDirectory(directory.path("a.json")))
        #expect(directory.names == ["a.json"])
    }

    /// A restore creates a missing file but never replaces one an app made (`EEXIST`).
    @Test func createExclusivelyNeverReplaces() throws {
        let directory = try Directory()
        defer { directory.remove() }
        #expect(try FileSystem.createExclusively(Self.bytes("[1]"), at: directory.path("a.json"), tempName: Self.temp))
        #expect(directory.read("a.json") == "[1]")
        #expect(
            !(try FileSystem.createExclusively(Self.bytes("[2]"), at: directory.path("a.json"), tempName: Self.temp)))
        #expect(directory.read("a.json") == "[1]")
        #expect(directory.names == ["a.json"])
    }
}
