import Foundation
import Testing

/// `make install DESTDIR=…`: every file in its place with its mode, the units pointed at the installed binaries, and
/// the binaries themselves the statically linked release build.
@Suite struct InstallTests {
    /// Everything `make install` installs with the default `PREFIX=/usr/local`, and each file's mode.
    static let defaultLayout: [String: Int] = [
        "etc/scenesync/scenesyncd.yaml": 0o644,
        "usr/local/bin/scenesync": 0o755,
        "usr/local/sbin/scenesyncd": 0o755,
        "usr/local/lib/systemd/system/scenesync-metrics.service": 0o644,
        "usr/local/lib/systemd/system/scenesync-metrics.timer": 0o644,
        "usr/local/lib/systemd/system/scenesyncd.service": 0o644,
        "usr/local/lib/systemd/system/scenesyncd.socket": 0o644,
        "usr/local/lib/systemd/user/scenesyncd.service": 0o644,
        "usr/local/lib/systemd/user/scenesyncd.socket": 0o644,
        "usr/local/share/man/man1/scenesync.1": 0o644,
        "usr/local/share/man/man8/scenesyncd.8": 0o644,
        "usr/local/share/bash-completion/completions/scenesync": 0o644,
        "usr/local/share/zsh/site-functions/_scenesync": 0o644,
        "usr/local/share/fish/vendor_completions.d/scenesync.fish": 0o644,
        "usr/local/share/doc/scenesync/README.md": 0o644,
    ]

    static func install(into destination: TemporaryDirectory, _ variables: [String] = []) async throws {
        _ = try await Packaging.deb()
        let result = try await Packaging.make(["install", "DESTDIR=\(destination.path)"] + variables)
        #expect(result.status == 0, "make install failed:\n\(result.output)")
    }

    static func text(_ path: URL) throws -> String { try String(contentsOf: path, encoding: .utf8) }

    /// The `ExecStart=`/`ExecReload=` lines of a unit, in order.
    static func commands(_ unit: URL) throws -> [String] {
        try text(unit).split(separator: "\n").map(String.init).filter {
            $0.hasPrefix("ExecStart=") || $0.hasPrefix("ExecReload=")
        }
    }

    @Test func installLaysOutEveryFile() async throws {
        let destination = try TemporaryDirectory("inst")
        defer { destination.remove() }
        try await Self.install(into: destination)

        let files = try Packaging.files(under: destination.url)
        #expect(files == Self.defaultLayout.keys.sorted())
        for (file, mode) in Self.defaultLayout where files.contains(file) {
            let actual = try Packaging.mode(of: destination.appending(file).path)
            #expect(actual == mode, "\(file) has mode \(String(actual, radix: 8)), not \(String(mode, radix: 8))")
        }

        let root = Packaging.root
        let installed = { (path: String) in destination.appending(path) }
        #expect(
            try Self.text(installed("etc/scenesync/scenesyncd.yaml"))
                == Self.text(root.appending("config/scenesyncd.yaml")))
        #expect(
            try Self.text(installed("usr/local/share/doc/scenesync/README.md"))
                == Self.text(root.appending("README.md")))
        #expect(
            try Self.commands(installed("usr/local/lib/systemd/system/scenesyncd.service")) == [
                "ExecStart=/usr/local/sbin/scenesyncd", "ExecReload=!/usr/local/bin/scenesync reload",
            ])
        #expect(
            try Self.commands(installed("usr/local/lib/systemd/user/scenesyncd.service")) == [
                "ExecStart=/usr/local/sbin/scenesyncd",
                "ExecReload=/usr/local/bin/scenesync --socket %t/scenesync/scenesync.sock reload",
            ])
        #expect(
            try Self.text(installed("usr/local/lib/systemd/system/scenesync-metrics.service")).contains(
                "/usr/local/bin/scenesync metrics >"))
        #expect(
            try Self.text(installed("usr/local/share/zsh/site-functions/_scenesync")).hasPrefix("#compdef scenesync"))
        #expect(try Self.text(installed("usr/local/share/bash-completion/completions/scenesync")).contains("complete "))
        #expect(
            try Self.text(installed("usr/local/share/fish/vendor_completions.d/scenesync.fish")).contains(
                "complete -c 'scenesync'"))
        #expect(try Self.text(installed("usr/local/share/man/man8/scenesyncd.8")).contains(".Dt SCENESYNCD 8"))
        #expect(try Self.text(installed("usr/local/share/man/man1/scenesync.1")).contains(".Dt SCENESYNC 1"))

        // The installed binaries run, and need no Swift runtime beside them.
        let daemon = try await HostCommand.run(installed("usr/local/sbin/scenesyncd").path, ["--version"])
        #expect(daemon.status == 0 && daemon.output.hasPrefix("scenesyncd "), "\(daemon.output)")
        let ldd = try #require(HostCommand.find("ldd"), "ldd not found")
        for binary in ["usr/local/sbin/scenesyncd", "usr/local/bin/scenesync"] {
            let libraries = try await HostCommand.run(ldd, [installed(binary).path])
            #expect(libraries.status == 0, "\(libraries.output)")
            #expect(!libraries.output.contains("libswift"), "\(binary) links the Swift runtime:\n\(libraries.output)")
            #expect(!libraries.output.contains("not found"), "\(binary):\n\(libraries.output)")
        }
    }

    @Test func installHonoursPrefixAndKeepsAnExistingConfiguration() async throws {
        let destination = try TemporaryDirectory("inst")
        defer { destination.remove() }
        let configuration = destination.appending("etc/scenesync/scenesyncd.yaml")
        try FileManager.default.createDirectory(
            at: configuration.deletingLastPathComponent(), withIntermediateDirectories: true)
        let edited = "log:\n  level: debug\n"
        try edited.write(to: configuration, atomically: true, encoding: .utf8)

        try await Self.install(into: destination, ["PREFIX=/opt/ss"])

        #expect(try Self.text(configuration) == edited, "make install replaced an existing configuration")
        let files = try Packaging.files(under: destination.url)
        let expected = Self.defaultLayout.keys.map { $0.replacingOccurrences(of: "usr/local/", with: "opt/ss/") }
        #expect(files == expected.sorted())
        #expect(
            try Self.commands(destination.appending("opt/ss/lib/systemd/system/scenesyncd.service")) == [
                "ExecStart=/opt/ss/sbin/scenesyncd", "ExecReload=!/opt/ss/bin/scenesync reload",
            ])
        #expect(
            try Self.commands(destination.appending("opt/ss/lib/systemd/user/scenesyncd.service")) == [
                "ExecStart=/opt/ss/sbin/scenesyncd",
                "ExecReload=/opt/ss/bin/scenesync --socket %t/scenesync/scenesync.sock reload",
            ])
    }
}

extension URL {
    fileprivate func appending(_ path: String) -> URL { appendingPathComponent(path) }
}
