import Foundation

/// Copies of built executables that another user (`nobody`) can run.
///
/// The build folder lies inside the clone, and a clone in a private directory (mode 0700, as `mktemp -d` makes
/// it, or inside a private home) keeps every other user out of the whole path: `nobody` could not even reach
/// `scenesyncd`. Tests that run a binary as another user run a copy of it in a fresh directory that anyone may
/// enter, below parents that anyone may traverse, and remove it at the end. A hard link stands in for the copy
/// where it can (same file system, a file anyone may execute), since a debug binary is large.
struct ReachableExecutables {
    let directory: TemporaryDirectory

    /// Puts `executables` into a fresh directory under ``base()``.
    init(_ executables: [URL]) throws {
        directory = try TemporaryDirectory("sbin", in: try Self.base())
        do {
            guard chmod(directory.path, 0o755) == 0 else { throw Unreachable("chmod \(directory.path)") }
            for executable in executables {
                try Self.place(executable, at: directory.appending(executable.lastPathComponent).path)
            }
        } catch {
            directory.remove()
            throw error
        }
    }

    /// The copy of the executable called `name`.
    func path(_ name: String) -> String { directory.appending(name).path }

    func remove() { directory.remove() }

    private static func place(_ source: URL, at target: String) throws {
        var status = stat()
        guard stat(source.path, &status) == 0 else { throw Unreachable("\(source.path) does not exist; build first") }
        let forEveryone = mode_t(S_IROTH | S_IXOTH)
        if status.st_mode & forEveryone == forEveryone, link(source.path, target) == 0 { return }
        try FileManager.default.copyItem(atPath: source.path, toPath: target)
        guard chmod(target, 0o755) == 0 else { throw Unreachable("chmod \(target)") }
    }

    /// The first temp directory (`TMPDIR`, `/tmp`, `/var/tmp`) whose every parent others may traverse: where
    /// files for another user go.
    static func base() throws -> String {
        let candidates = [FileManager.default.temporaryDirectory.path, "/tmp", "/var/tmp"]
        guard let base = candidates.first(where: othersCanTraverse) else {
            throw Unreachable("none of \(candidates.joined(separator: ", ")) can be traversed by other users")
        }
        return base
    }

    /// Whether every directory from `/` down to `path` lets others through (`o+x`).
    static func othersCanTraverse(_ path: String) -> Bool {
        var directories = ["/"]
        for component in path.split(separator: "/") {
            directories.append((directories.count == 1 ? "" : directories[directories.count - 1]) + "/" + component)
        }
        return directories.allSatisfy { directory in
            var status = stat()
            return stat(directory, &status) == 0 && status.st_mode & S_IFMT == S_IFDIR && status.st_mode & S_IXOTH != 0
        }
    }

    struct Unreachable: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = "executables for another user: " + description }
    }
}
