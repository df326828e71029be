import Foundation
import Testing

/// The `.deb` that `make deb` builds, checked from outside: its files in Debian's places, its control data, and
/// lintian's verdict.
@Suite struct DebPackageTests {
    /// Every file the package ships (directories left out).
    static let files: Set<String> = [
        "etc/scenesync/scenesyncd.yaml",
        "lib/systemd/system/scenesync-metrics.service",
        "lib/systemd/system/scenesync-metrics.timer",
        "lib/systemd/system/scenesyncd.service",
        "lib/systemd/system/scenesyncd.socket",
        "usr/bin/scenesync",
        "usr/sbin/scenesyncd",
        "usr/lib/systemd/user/scenesyncd.service",
        "usr/lib/systemd/user/scenesyncd.socket",
        "usr/share/bash-completion/completions/scenesync",
        "usr/share/doc/scenesync/README.md.gz",
        "usr/share/doc/scenesync/changelog.Debian.gz",
        "usr/share/doc/scenesync/copyright",
        "usr/share/fish/vendor_completions.d/scenesync.fish",
        "usr/share/lintian/overrides/scenesync",
        "usr/share/man/man1/scenesync.1.gz",
        "usr/share/man/man8/scenesyncd.8.gz",
        "usr/share/zsh/vendor-completions/_scenesync",
    ]

    static func dpkgDeb(_ arguments: [String]) async throws -> String {
        let dpkgDeb = try #require(HostCommand.find("dpkg-deb"), "dpkg-deb not found")
        let result = try await HostCommand.run(dpkgDeb, arguments)
        #expect(result.status == 0, "dpkg-deb \(arguments):\n\(result.output)")
        return result.output
    }

    @Test func packageHoldsEveryFileInDebiansPlaces() async throws {
        let deb = try await Packaging.deb()
        let listing = try await Self.dpkgDeb(["--contents", deb.path])
        // "-rwxr-xr-x root/root  12345 2026-11-23 12:00 ./usr/sbin/scenesyncd"
        var files: Set<String> = []
        for line in listing.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard let mode = fields.first, let path = fields.last, !mode.hasPrefix("d") else { continue }
            #expect(fields.count > 1 && fields[1] == "root/root", "not owned by root: \(line)")
            files.insert(String(path.dropFirst(2)))
            let executable = path == "./usr/sbin/scenesyncd" || path == "./usr/bin/scenesync"
            #expect(mode == (executable ? "-rwxr-xr-x" : "-rw-r--r--"), "\(line)")
        }
        #expect(
            files == Self.files, "extra: \(files.subtracting(Self.files)), missing: \(Self.files.subtracting(files))")
    }

    @Test func controlDataNamesTheLibrariesTheBinariesLoad() async throws {
        let deb = try await Packaging.deb()
        let control = try await Self.dpkgDeb(["--field", deb.path])
        let fields = Dictionary(
            control.split(separator: "\n").filter { !$0.hasPrefix(" ") }.compactMap { line -> (String, String)? in
                guard let colon = line.firstIndex(of: ":") else { return nil }
                return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
            }, uniquingKeysWith: { first, _ in first })
        #expect(fields["Package"] == "scenesync")
        #expect(fields["Version"] == (try Packaging.debianVersion()))
        let depends = try #require(fields["Depends"], "no Depends:\n\(control)")
        let packages = Set(depends.split(separator: ",").compactMap { $0.split(separator: " ").first.map(String.init) })
        // Computed by dpkg-shlibdeps: libsystemd0 through CSystemd, the C and C++ runtimes the static Swift runtime
        // needs, and no Swift toolchain at all.
        #expect(packages.isSuperset(of: ["libc6", "libsystemd0", "libstdc++6", "libgcc-s1"]), "\(depends)")
        #expect(!depends.lowercased().contains("swift"), "\(depends)")

        let work = try TemporaryDirectory("ctl")
        defer { work.remove() }
        _ = try await Self.dpkgDeb(["--control", deb.path, work.path])
        let listed = try String(contentsOf: work.appending("conffiles"), encoding: .utf8)
        #expect(listed == "/etc/scenesync/scenesyncd.yaml\n")
        for script in ["postinst", "prerm", "postrm"] {
            #expect(try Packaging.mode(of: work.appending(script).path) == 0o755, "\(script)")
        }
    }

    @Test func lintianFindsNoErrors() async throws {
        let deb = try await Packaging.deb()
        let lintian = try #require(
            HostCommand.find("lintian"), "lintian not found: install it (scripts/install-deps.sh test)")
        let result = try await HostCommand.run(
            lintian, ["--fail-on", "error,warning", "--display-info", deb.path], timeout: .seconds(300))
        let lines = result.output.split(separator: "\n")
        #expect(lines.filter { $0.hasPrefix("E: ") }.isEmpty, "lintian:\n\(result.output)")
        #expect(lines.filter { $0.hasPrefix("W: ") }.isEmpty, "lintian:\n\(result.output)")
        #expect(result.status == 0, "lintian exit status \(result.status):\n\(result.output)")
    }
}
