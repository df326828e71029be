import Foundation
import Testing

/// What `make deb` and `make install` produce, for the packaging tests.
///
/// The tests build nothing themselves: `make test` runs `make deb` before the tests (one static release build per
/// run), and every test first checks with `make -q` that the package is up to date. A stale or missing package
/// fails the test with the command to run, instead of a build inside `swift test`, which holds the lock on the
/// build folder that the package's own build needs (`make test` runs the tests on `.build-release`).
enum Packaging {
    static let root = BuiltProducts.packageRoot
    /// Where the Makefile keeps what it builds for packaging (`PKG_SCRATCH`, `PKG_OUT`).
    static let dist = root.appendingPathComponent(".build-release/dist")

    /// The package version, as the first line of `packaging/deb/changelog` names it (`0.1.0-1`).
    static func debianVersion() throws -> String {
        let changelog = try String(
            contentsOf: root.appendingPathComponent("packaging/deb/changelog"), encoding: .utf8)
        let first = try #require(changelog.split(separator: "\n").first, "packaging/deb/changelog is empty")
        let match = try #require(
            first.firstMatch(of: /^scenesync \(([^)]+)\)/), "no version in the changelog's first line: \(first)")
        return String(match.1)
    }

    /// The `.deb` that `make deb` built, checked to be up to date.
    static func deb() async throws -> URL {
        let dpkg = try #require(HostCommand.find("dpkg"), "dpkg not found")
        let arch = try await HostCommand.run(dpkg, ["--print-architecture"])
        let name = "scenesync_\(try debianVersion())_\(arch.output.trimmingCharacters(in: .whitespacesAndNewlines)).deb"
        try await requireUpToDate(name)
        return root.appendingPathComponent(name)
    }

    /// The statically linked release `scenesyncd` that the package ships (and `make run` runs), checked to be up to
    /// date: for the tests that are about what a user runs, such as a signal at the first instruction. It is the
    /// package's copy (`PKG_BIN`): the test build puts its own `scenesyncd`, with the test hooks, in the build folder.
    static func releaseDaemon() async throws -> URL {
        try await requireUpToDate(".build-release/dist/binaries.stamp")
        return dist.appendingPathComponent("bin/scenesyncd")
    }

    /// Fails the test unless `make -q target` says the target is up to date.
    static func requireUpToDate(_ target: String) async throws {
        let result = try await make(["-q", target])
        try #require(
            result.status == 0,
            "\(target) is missing or out of date: run `make deb` (make test does) before the packaging tests"
        )
    }

    /// Runs `make arguments…` in the package root.
    static func make(_ arguments: [String], timeout: Duration = .seconds(120)) async throws -> HostCommand.Result {
        let make = try #require(HostCommand.find("make"), "make not found")
        return try await HostCommand.run(make, ["--no-print-directory", "-C", root.path] + arguments, timeout: timeout)
    }

    /// Every file and symbolic link under `directory`, as paths relative to it, sorted; directories are left out.
    static func files(under directory: URL) throws -> [String] {
        let base = directory.resolvingSymlinksInPath().path
        guard let enumerator = FileManager.default.enumerator(atPath: base) else {
            throw PackagingError("cannot list \(base)")
        }
        var files: [String] = []
        while let relative = enumerator.nextObject() as? String {
            let attributes = try FileManager.default.attributesOfItem(atPath: base + "/" + relative)
            if attributes[.type] as? FileAttributeType != .typeDirectory { files.append(relative) }
        }
        return files.sorted()
    }

    /// The permission bits of a file.
    static func mode(of path: String) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        return try #require((attributes[.posixPermissions] as? NSNumber)?.intValue, "no permissions for \(path)")
    }
}

struct PackagingError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
