import Foundation
import SceneSyncCore
import Testing

@testable import SceneSyncDaemon

/// The daemon's loader and the client library's reader of `scenes.directory` (`ScenesDirectory`) on the same files:
/// where the daemon starts, the client finds the same directory or refuses loudly; where the daemon refuses the
/// directory, so does the client.
@Suite struct ScenesDirectoryAgreementTests {
    static let shippedFile = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("config/scenesyncd.yaml").path

    /// A temp root with a default configuration file under `CONFIGURATION_DIRECTORY`.
    struct Fixture {
        let root: String

        init() throws {
            var template = Array((ConfigurationPath.normalized(NSTemporaryDirectory()) + "/ssa.XXXXXX").utf8CString)
            guard let created = mkdtemp(&template) else { throw POSIXError(.EIO) }
            root = String(cString: created)
            try FileManager.default.createDirectory(atPath: root + "/etc", withIntermediateDirectories: true)
        }

        var environment: [String: String] {
            ["HOME": root + "/home", "XDG_RUNTIME_DIR": root + "/run", "CONFIGURATION_DIRECTORY": root + "/etc"]
        }

        var file: String { root + "/etc/scenesyncd.yaml" }

        func write(_ bytes: [UInt8]) throws { try Data(bytes).write(to: URL(fileURLWithPath: file)) }

        func remove() { try? FileManager.default.removeItem(atPath: root) }

        /// The daemon's scenes directory, or its one-line error.
        func daemon(
            _ extra: [String: String] = [:], overrides: ConfigurationOverrides = ConfigurationOverrides()
        ) async -> Result<String, ConfigurationError> {
            do throws(ConfigurationError) {
                let configuration = try await DaemonConfiguration.load(
                    overrides: overrides, environment: environment.merging(extra) { $1 }, uid: 1000,
                    workingDirectory: "/work")
                return .success(configuration.scenesDirectory)
            } catch {
                return .failure(error)
            }
        }

        /// The client's answer for the same environment: the rule, with the file read by the client's reader.
        func client(_ extra: [String: String] = [:]) throws(ScenesDirectory.Problem) -> String {
            let bytes = FileManager.default.contents(atPath: file).map { Array($0) }
            return try ScenesDirectory.resolve(
                environment: environment.merging(extra) { $1 }, uid: 1000, workingDirectory: "/work"
            ) { () throws(ScenesDirectory.Problem) -> String? in
                guard let bytes else { return nil }
                return try ScenesDirectory.configured(inConfigurationFile: bytes)
            }
        }
    }

    static let shipped = (try? String(contentsOfFile: shippedFile, encoding: .utf8)) ?? ""

    /// Files both read, with the directory they must find (`nil`: the default).
    static let agreed: [(String, String?)] = [
        ("", nil),
        (shipped, nil),
        (
            shipped.replacingOccurrences(
                of: "  # directory: /run/scenesync/scenes\n", with: "  directory: /run/scenesync/scenes\n"),
            "/run/scenesync/scenes"
        ),
        ("scenes:\n  directory: /srv/scenes\n", "/srv/scenes"),
        ("scenes:\n    directory: /srv//a/./b/  # c\n", "/srv/a/b"),
        ("scenes:\n  directory: /srv/a#b\n", "/srv/a#b"),
        ("scenes:\n  directory: /srv/a:b\n", "/srv/a:b"),
        ("scenes:\n  directory: \"/srv/with space/\\u00e9\"\n", "/srv/with space/\u{e9}"),
        ("scenes:\n  directory: '/srv/it''s'\n", "/srv/it's"),
        ("\"scenes\":\n  'directory': /srv/q\n", "/srv/q"),
        ("scenes: {format: auto, directory: /srv/f}\n", "/srv/f"),
        ("scenes: {format: auto}\n", nil),
        ("scenes:\nstate:\n  directory: /srv/state\n", nil),
        (
            """
            log:
              level: info
            access:
              write_uids: [1000, 1001]
              write_gids:
                - 5
                - 6
            cluster: {scenes: ["com.*", '*x'], schema: s}
            scenes:
              format: auto
              directory: /srv/last
              max_depth: 10
            socket:
              mode: "0660"

            """,
            "/srv/last"
        ),
        (
            "cluster:\n  password_file: /etc/one\n    \"two\n  schema: s\nstate:\n  directory: >-\n    /srv/state\n"
                + "    scenes:\nscenes:\n  directory: /srv/c\n",
            "/srv/c"
        ),
        ("--- # doc\r\nscenes:\r\n  directory: /srv/w\r\n", "/srv/w"),
        ("\u{FEFF}scenes:\r\n  directory: /srv/b\r\n", "/srv/b"),
    ]

    @Test(arguments: agreed.indices)
    func bothFindTheSameDirectory(_ index: Int) async throws {
        let (yaml, expected) = Self.agreed[index]
        let fixture = try Fixture()
        defer { fixture.remove() }
        try fixture.write(Array(yaml.utf8))
        let daemon = try await fixture.daemon().get()
        #expect(try fixture.client() == daemon, "\(yaml)")
        let builtIn = fixture.root + "/run/scenesync/scenes"
        #expect(daemon == (expected ?? builtIn), "\(yaml)")
    }

    /// Forms the daemon reads but the client's reader does not read with certainty: it refuses them, naming the
    /// line, instead of putting files where the daemon does not look.
    static let refusedByTheClientOnly = [
        "scenes:\n  directory:\n    /srv/next\n",
        "scenes:\n  directory: /srv/a\n    b\n",
        "scenes:\n  directory: \"/srv/a\n    b\"\n",
        "scenes:\n  directory: >-\n    /srv/a\n",
        "scenes:\n  directory: &d /srv/a\n",
        "scenes:\n  directory: !!str /srv/a\n",
        "scenes: {format: auto,\n  directory: /srv/a}\n",
        "%YAML 1.1\n---\nscenes:\n  directory: /srv/a\n",
        "scenes:\n  directory: /srv/a\n...\n",
        "  scenes:\n    directory: /srv/a\n",
    ]

    @Test(arguments: refusedByTheClientOnly)
    func theClientRefusesWhatItCannotReadForCertain(_ yaml: String) async throws {
        let fixture = try Fixture()
        defer { fixture.remove() }
        try fixture.write(Array(yaml.utf8))
        _ = try await fixture.daemon().get()
        #expect(throws: ScenesDirectory.Problem.self) { try fixture.client() }
    }

    /// Files whose `scenes.directory` the daemon refuses, so that no daemon starts on them.
    static let refusedByBoth: [[UInt8]] =
        [
            "scenes:\n  directory: scenes\n",
            "scenes:\n  directory:\n",
            "scenes:\n  directory: ~\n",
            "scenes:\n  directory: \"\"\n",
            "scenes:\n  directory: [/srv/a]\n",
            "scenes:\n  directory: /a\n  directory: /b\n",
            "scenes:\nscenes:\n",
            "scenes: /srv/a\n",
            "- scenes\n",
            "scenes:\n\tdirectory: /srv/a\n",
            "scenes:\n  directory: /a: b\n",
        ].map { Array($0.utf8) } + [Array("scenes:\n  directory: /a".utf8) + [0xFF]]

    @Test(arguments: refusedByBoth)
    func bothRefuse(_ bytes: [UInt8]) async throws {
        let fixture = try Fixture()
        defer { fixture.remove() }
        try fixture.write(bytes)
        let daemon = await fixture.daemon()
        #expect(throws: ConfigurationError.self) { try daemon.get() }
        #expect(throws: ScenesDirectory.Problem.self) { try fixture.client() }
    }

    @Test func theEnvironmentVariableWinsForBothAndTheFlagForTheDaemon() async throws {
        let fixture = try Fixture()
        defer { fixture.remove() }
        try fixture.write(Array("scenes:\n  directory: /srv/file\n".utf8))
        #expect(ConfigurationKey.scenesDirectory.environmentVariable == ScenesDirectory.environmentVariable)
        for value in ["/srv/env/", "relative/env"] {
            let variable = [ScenesDirectory.environmentVariable: value]
            let daemon = try await fixture.daemon(variable).get()
            #expect(daemon == (value.hasPrefix("/") ? "/srv/env" : "/work/relative/env"))
            #expect(try fixture.client(variable) == daemon)
        }
        let flagged = try await fixture.daemon(
            [ScenesDirectory.environmentVariable: "/srv/env"],
            overrides: ConfigurationOverrides(scenesDirectory: "/srv/flag")
        ).get()
        #expect(flagged == "/srv/flag")
    }
}
