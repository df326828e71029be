import Foundation
import Logging
import SceneSyncCore
import Testing

@testable import SceneSyncDaemon

@Suite struct DaemonConfigurationTests {
    // MARK: Defaults and the shipped file

    @Test func noFileGivesTheBuiltInDefaults() async throws {
        let fixture = try ConfigurationFixture()
        defer { fixture.remove() }
        let configuration = try await fixture.load()
        #expect(configuration == fixture.defaults)
        #expect(configuration.configFile == nil)
        #expect(configuration.scenesDirectory == fixture.root + "/run/scenesync/scenes")
        #expect(configuration.socketMode == 0o660)
        #expect(configuration.stallTimeout == .seconds(60))
        #expect(configuration.logLevel == .info)
    }

    @Test func theShippedFileLoadsAsExactlyTheBuiltInDefaults() async throws {
        let fixture = try ConfigurationFixture()
        defer { fixture.remove() }
        let configuration = try await fixture.load(overrides: ConfigurationOverrides(configFile: shippedFile))
        var expected = fixture.defaults
        expected.configFile = shippedFile
        #expect(configuration == expected)
    }

    @Test func theShippedFileDocumentsEveryKey() throws {
        let text = try String(contentsOfFile: shippedFile, encoding: .utf8)
        let documented = documentedKeys(text)
        // Every property of the configuration maps to a key, so a new property cannot go undocumented; a section's
        // properties are named after it (`socket.path`).
        let properties = Set(
            Mirror(reflecting: DaemonConfiguration(defaults: PlatformDefaults.resolve(environment: [:], uid: 0)))
                .children.flatMap { property -> [String] in
                    let label = property.label ?? ""
                    let section = Mirror(reflecting: property.value)
                    guard section.displayStyle == .struct else { return [label] }
                    return section.children.map { "\(label).\($0.label ?? "")" }
                }
        )
        #expect(properties.subtracting(["configFile"]) == Set(propertyKeys.keys))
        #expect(Set(propertyKeys.values) == Set(ConfigurationKey.allCases.map(\.rawValue)))
        for key in ConfigurationKey.allCases {
            #expect(documented[key.rawValue] != nil, "\(key.rawValue) is not documented in config/scenesyncd.yaml")
        }
        #expect(Set(documented.keys) == Set(ConfigurationKey.allCases.map(\.rawValue)))
        // Only the platform-dependent paths are commented out.
        let commented = Set(documented.filter { !$0.value }.keys)
        #expect(
            commented == [
                "scenes.directory", "state.directory", "socket.path", "cluster.postgres", "cluster.password_file",
                "cluster.host",
            ])
        #expect(text.contains("# directory: /run/scenesync/scenes"))
        #expect(text.contains("# directory: /var/lib/scenesync"))
        #expect(text.contains("# path: /run/scenesync.sock"))
    }

    @Test func theDefaultFileIsReadWhenItExists() async throws {
        let fixture = try ConfigurationFixture()
        defer { fixture.remove() }
        try fixture.writeDefaultFile("snapshots:\n  keep: 7\n")
        let configuration = try await fixture.load()
        #expect(configuration.snapshotsKeep == 7)
        #expect(configuration.configFile == fixture.defaultFile)
    }

    @Test(arguments: ["", "# only comments\n", "---\n", "~\n", "scenes:\nstate:\n"])
    func anEmptyFileGivesTheDefaults(text: String) async throws {
        let fixture = try ConfigurationFixture()
        defer { fixture.remove() }
        try fixture.writeDefaultFile(text)
        var expected = fixture.defaults
        expected.configFile = fixture.defaultFile
        #expect(try await fixture.load() == expected)
    }

    @Test func everyKeyCanBeSetInTheFile() async throws {
        let fixture = try ConfigurationFixture()
        defer { fixture.remove() }
        let file = try fixture.write(
            "custom.yaml",
            """
            scenes:
              directory: /srv/scenes/
              format: codable
              restore_missing: false
              max_file_bytes: 2048
              max_depth: 16
            state: {directory: /srv//state}
            snapshots:
              keep: 1
            history:
              max_revisions: 0
            socket:
              path: /srv/app.sock
              mode: '0600'
              max_clients: 2
              max_line_bytes: 4096
              subscriber_queue: 8
              stall_timeout_s: 1.5
              heartbeat_s: 2
            access:
              write_uids: [1000, 1001]
              write_gids:
                - 0
                - 4294967294
            log:
              level: trace
            """
        )
        let configuration = try await fixture.load(overrides: ConfigurationOverrides(configFile: file))
        #expect(configuration == Self.everyKeyChanged(configFile: file))
    }

    @Test func everyKeyCanBeSetByAnEnvironmentVariable() async throws {
        let fixture = try ConfigurationFixture()
        defer { fixture.remove() }
        let configuration = try await fixture.load(environment: [
            "SCENESYNCD_SCENES_DIRECTORY": "/srv/scenes/",
            "SCENESYNCD_SCENES_FORMAT": "codable",
            "SCENESYNCD_SCENES_RESTORE_MISSING": "false",
            "SCENESYNCD_SCENES_MAX_FILE_BYTES": "2048",
            "SCENESYNCD_SCENES_MAX_DEPTH": "16",
            "SCENESYNCD_STATE_DIRECTORY": "/srv//state",
            "SCENESYNCD_SNAPSHOTS_KEEP": "1",
            "SCENESYNCD_HISTORY_MAX_REVISIONS": "0",
            "SCENESYNCD_SOCKET_PATH": "/srv/app.sock",
            "SCENESYNCD_SOCKET_MODE": "0600",
            "SCENESYNCD_SOCKET_MAX_CLIENTS": "2",
            "SCENESYNCD_SOCKET_MAX_LINE_BYTES": "4096",
            "SCENESYNCD_SOCKET_SUBSCRIBER_QUEUE": "8",
            "SCENESYNCD_SOCKET_STALL_TIMEOUT_S": "1.5",
            "SCENESYNCD_SOCKET_HEARTBEAT_S": "2",
            "SCENESYNCD_ACCESS_WRITE_UIDS": "1000, 1001",
            "SCENESYNCD_ACCESS_WRITE_GIDS": "0,4294967294",
            "SCENESYNCD_LOG_LEVEL": "trace",
        ])
        #expect(configuration == Self.everyKeyChanged(configFile: nil))
    }

    @Test func environmentVariableNamesFollowTheKeys() {
        #expect(ConfigurationKey.socketPath.environmentVariable == "SCENESYNCD_SOCKET_PATH")
        #expect(ConfigurationKey.scenesMaxFileBytes.environmentVariable == "SCENESYNCD_SCENES_MAX_FILE_BYTES")
        #expect(ConfigurationKey.socketStallTimeout.environmentVariable == "SCENESYNCD_SOCKET_STALL_TIMEOUT_S")
    }

    // MARK: Precedence

    @Test func flagsOverrideTheEnvironmentWhichOverridesTheFileWhichOverridesTheDefaults() async throws {
        let fixture = try ConfigurationFixture()
        defer { fixture.remove() }
        try fixture.writeDefaultFile(
            """
            scenes:
              directory: /file/scenes
            state:
              directory: /file/state
            socket:
              path: /file/socket
              max_clients: 10
            log:
              level: warning
            """
        )
        let environment = [
            "SCENESYNCD_SCENES_DIRECTORY": "/env/scenes",
            "SCENESYNCD_STATE_DIRECTORY": "/env/state",
            "SCENESYNCD_LOG_LEVEL": "debug",
        ]
        let configuration = try await fixture.load(
            overrides: ConfigurationOverrides(scenesDirectory: "/flag/scenes", logLevel: "error"),
            environment: environment
        )
        #expect(configuration.scenesDirectory == "/flag/scenes")  // flag over environment and file
        #expect(configuration.logLevel == .error)  // flag over environment and file
        #expect(configuration.stateDirectory == "/env/state")  // environment over file
        #expect(configuration.socketPath == "/file/socket")  // file over default
        #expect(configuration.maxClients == 10)  // file over default
        #expect(configuration.snapshotsKeep == 3)  // default
        #expect(configuration.configFile == fixture.defaultFile)
    }

    @Test func eachFlagOverridesItsKey() async throws {
        let fixture = try ConfigurationFixture()
        defer { fixture.remove() }
        let configuration = try await fixture.load(
            overrides: ConfigurationOverrides(
                scenesDirectory: "/a/scenes",
                stateDirectory: "/a/state",
                socketPath: "/a/socket",
                logLevel: "critical"
            ),
            environment: ["SCENESYNCD_SOCKET_PATH": "/env/socket"]
        )
        #expect(configuration.scenesDirectory == "/a/scenes")
        #expect(configuration.stateDirectory == "/a/state")
        #expect(configuration.socketPath == "/a/socket")
        #expect(configuration.logLevel == .critical)
    }

    @Test func relativeFlagAndEnvironmentPathsUseTheWorkingDirectory() async throws {
        let fixture = try ConfigurationFixture()
        defer { fixture.remove() }
        _ = try fixture.write("relative.yaml", "snapshots:\n  keep: 4\n")
        let configuration = try await fixture.load(
            overrides: ConfigurationOverrides(configFile: "./relative.yaml", scenesDirectory: "scenes/"),
            environment: ["SCENESYNCD_STATE_DIRECTORY": "state", "SCENESYNCD_SOCKET_PATH": "../s.sock"],
            workingDirectory: fixture.root
        )
        #expect(configuration.configFile == fixture.root + "/relative.yaml")
        #expect(configuration.snapshotsKeep == 4)
        #expect(configuration.scenesDirectory == fixture.root + "/scenes")
        #expect(configuration.stateDirectory == fixture.root + "/state")
        #expect(configuration.socketPath == fixture.root + "/../s.sock")
    }

    @Test func theRealWorkingDirectoryIsUsedByThePublicEntryPoint() async throws {
        let fixture = try ConfigurationFixture()
        defer { fixture.remove() }
        let configuration = try await DaemonConfiguration.load(
            overrides: ConfigurationOverrides(scenesDirectory: "x"),
            environment: fixture.environment,
            uid: 1000
        )
        #expect(configuration.scenesDirectory == FileManager.default.currentDirectoryPath + "/x")
    }

    @Test func emptyEnvironmentVariablesAndForeignOnesAreIgnored() async throws {
        let fixture = try ConfigurationFixture()
        defer { fixture.remove() }
        try fixture.writeDefaultFile("socket:\n  max_clients: 5\n")
        let configuration = try await fixture.load(environment: [
            "SCENESYNCD_SOCKET_MAX_CLIENTS": "",
            "SCENESYNCD_OPTS": "--log-level debug",
            "SCENESYNC_BIN_DIR": "/x",
        ])
        #expect(configuration.maxClients == 5)
    }

    // MARK: Errors

    /// Each case: the file's text, then the expected message after "<file>:".
    static let fileErrors: [(String, String)] = [
        (
            "socket:\n  max_client: 5\n",
            "2: unknown key socket.max_client (did you mean socket.max_clients?)"
        ),
        ("sockets:\n  path: /x\n", "1: unknown section sockets (did you mean socket?)"),
        ("colour: red\n", "1: unknown section colour"),
        ("socket.path: /x\n", "1: write socket.path nested, as socket: with the key indented below it"),
        ("- a\n- b\n", "1: the file must be a mapping of sections (scenes:, state:, socket:, …)"),
        ("scenes: 5\n", "1: scenes: expected a mapping of keys, not a single value or a list"),
        (
            "scenes:\n  max_depth:\n",
            "2: scenes.max_depth has no value; give one, or comment the line out to use the default"
        ),
        ("scenes:\n  format: [auto]\n", "2: scenes.format: expected a single value, not a list or a mapping"),
        ("scenes:\n  format: json\n", "2: scenes.format: \"json\" is not one of auto, codable, array"),
        ("scenes:\n  restore_missing: maybe\n", "2: scenes.restore_missing: expected true or false, got \"maybe\""),
        ("scenes:\n  restore_missing: 'true'\n", "2: scenes.restore_missing: expected true or false, got \"true\""),
        ("scenes:\n  max_file_bytes: 0\n", "2: scenes.max_file_bytes: must be at least 1, got 0"),
        ("scenes:\n  max_file_bytes: -1\n", "2: scenes.max_file_bytes: must be at least 1, got -1"),
        ("scenes:\n  max_depth: 1.5\n", "2: scenes.max_depth: expected a whole number, got \"1.5\""),
        ("snapshots:\n  keep: 0\n", "2: snapshots.keep: must be at least 1, got 0"),
        ("history:\n  max_revisions: -1\n", "2: history.max_revisions: must be at least 0, got -1"),
        ("socket:\n  max_clients: many\n", "2: socket.max_clients: expected a whole number, got \"many\""),
        ("socket:\n  max_clients: \"10\"\n", "2: socket.max_clients: expected a whole number, got \"10\""),
        ("socket:\n  max_line_bytes: 0\n", "2: socket.max_line_bytes: must be at least 1, got 0"),
        ("socket:\n  subscriber_queue: 0\n", "2: socket.subscriber_queue: must be at least 1, got 0"),
        (
            "socket:\n  max_pending_bytes: 65535\n",
            "2: socket.max_pending_bytes: must be from 65536 to 1073741824, got 65535"
        ),
        (
            "socket:\n  max_pending_bytes: 1073741825\n",
            "2: socket.max_pending_bytes: must be from 65536 to 1073741824, got 1073741825"
        ),
        ("scenes:\n  write_wait_ms: -1\n", "2: scenes.write_wait_ms: must be from 0 to 60000, got -1"),
        ("scenes:\n  write_wait_ms: 60001\n", "2: scenes.write_wait_ms: must be from 0 to 60000, got 60001"),
        (
            "socket:\n  stall_timeout_s: 0\n",
            "2: socket.stall_timeout_s: must be more than 0 and at most 86400 seconds, got 0.0"
        ),
        (
            "socket:\n  heartbeat_s: .inf\n",
            "2: socket.heartbeat_s: must be more than 0 and at most 86400 seconds, got inf"
        ),
        ("socket:\n  heartbeat_s: soon\n", "2: socket.heartbeat_s: expected a number of seconds, got \"soon\""),
        (
            "socket:\n  mode: 0660\n",
            "2: socket.mode: quote the mode, as \"0660\": YAML reads an unquoted 0660 as the number 432"
        ),
        (
            "socket:\n  mode: 660\n",
            "2: socket.mode: quote the mode, as \"660\": YAML reads an unquoted 660 as the number 660"
        ),
        (
            "socket:\n  mode: \"0999\"\n",
            "2: socket.mode: \"0999\" is not an octal mode from \"0000\" to \"0777\", like \"0660\""
        ),
        (
            "socket:\n  mode: \"1777\"\n",
            "2: socket.mode: \"1777\" is not an octal mode from \"0000\" to \"0777\", like \"0660\""
        ),
        (
            "socket:\n  mode: \"0o660\"\n",
            "2: socket.mode: \"0o660\" is not an octal mode from \"0000\" to \"0777\", like \"0660\""
        ),
        (
            "socket:\n  path: \"/" + String(repeating: "s", count: 107) + "\"\n",
            "2: socket.path: \"/" + String(repeating: "s", count: 107)
                + "\" is 108 bytes long; a Unix socket path holds at most 107"
        ),
        (
            "scenes:\n  directory: scenes\n",
            "2: scenes.directory: \"scenes\" is not an absolute path (paths in the file must be absolute)"
        ),
        ("state:\n  directory: \"\"\n", "2: state.directory: the path is empty"),
        ("access:\n  write_uids: 1000\n", "2: access.write_uids: expected a list of numeric IDs, like [1000, 1001]"),
        ("access:\n  write_uids: [[1]]\n", "2: access.write_uids: expected a list of numeric IDs, like [1000, 1001]"),
        ("access:\n  write_gids: [root]\n", "2: access.write_gids: expected a list of numeric IDs, got a list"),
        ("access:\n  write_gids: [-1]\n", "2: access.write_gids: -1 is not a valid user or group ID"),
        ("access:\n  write_uids: [4294967295]\n", "2: access.write_uids: 4294967295 is not a valid user or group ID"),
        (
            "log:\n  level: verbose\n",
            "2: log.level: \"verbose\" is not one of trace, debug, info, notice, warning, error, critical"
        ),
        (
            "log:\n  level: \"a\\nb\"\n",
            "2: log.level: \"a\\nb\" is not one of trace, debug, info, notice, warning, error, critical"
        ),
        ("socket:\n  max_clients: 1\n  max_clients: 2\n", "2: invalid YAML: max_clients appears twice in one mapping"),
    ]

    @Test(arguments: fileErrors)
    func fileErrorsNameTheFileTheLineAndTheKey(text: String, expected: String) async throws {
        let fixture = try ConfigurationFixture()
        defer { fixture.remove() }
        try fixture.writeDefaultFile(text)
        let message = await fixture.failure()
        #expect(message == "\(fixture.defaultFile):\(expected)")
    }

    @Test func yamlSyntaxErrorsGiveTheirPosition() async throws {
        let fixture = try ConfigurationFixture()
        defer { fixture.remove() }
        try fixture.writeDefaultFile("socket:\n  mode: \"0660\n  path: /x\n")
        let message = try #require(await fixture.failure())
        #expect(message.hasPrefix("\(fixture.defaultFile):4:1: invalid YAML: "))
        #expect(!message.contains("\n"))

        try fixture.writeDefaultFile("scenes:\n  format: auto\n   max_depth: 3\n")
        let indentation = try #require(await fixture.failure())
        #expect(indentation.hasPrefix("\(fixture.defaultFile):3:"))
        #expect(indentation.contains("invalid YAML: "))
    }

    @Test func aFileThatIsNotUTF8IsRejected() async throws {
        let fixture = try ConfigurationFixture()
        defer { fixture.remove() }
        try Data([0x6C, 0x6F, 0x67, 0x3A, 0xFF, 0x0A]).write(to: URL(fileURLWithPath: fixture.defaultFile))
        #expect(await fixture.failure() == "\(fixture.defaultFile): the file is not UTF-8 text")
    }

    @Test func aBadFileValueIsReportedEvenWhenAFlagOverridesIt() async throws {
        let fixture = try ConfigurationFixture()
        defer { fixture.remove() }
        try fixture.writeDefaultFile("log:\n  level: loud\n")
        let message = await fixture.failure(overrides: ConfigurationOverrides(logLevel: "info"))
        #expect(
            message
                == "\(fixture.defaultFile):2: log.level: \"loud\" is not one of trace, debug, info, notice, warning, error, critical"
        )
    }

    @Test func aMissingExplicitFileIsAnError() async throws {
        let fixture = try ConfigurationFixture()
        defer { fixture.remove() }
        let path = fixture.root + "/missing.yaml"
        #expect(
            await fixture.failure(overrides: ConfigurationOverrides(configFile: path))
                == "\(path): the configuration file named by --config does not exist")
    }

    @Test func aDirectoryInPlaceOfTheFileIsAnError() async throws {
        let fixture = try ConfigurationFixture()
        defer { fixture.remove() }
        try FileManager.default.createDirectory(atPath: fixture.defaultFile, withIntermediateDirectories: true)
        #expect(await fixture.failure() == "\(fixture.defaultFile): is a directory, not a configuration file")
        let explicit = ConfigurationOverrides(configFile: fixture.root)
        #expect(
            await fixture.failure(overrides: explicit) == "\(fixture.root): is a directory, not a configuration file")
    }

    // As root, IntegrationTests' UnprivilegedTests checks this error through a daemon run as nobody.
    @Test(.enabled(if: getuid() != 0, "root may read any file; UnprivilegedTests checks this error as nobody"))
    func anUnreadableFileIsAnError() async throws {
        let fixture = try ConfigurationFixture()
        defer { fixture.remove() }
        try fixture.writeDefaultFile("log:\n  level: info\n")
        chmod(fixture.defaultFile, 0)
        #expect(
            await fixture.failure()
                == "\(fixture.defaultFile): cannot read the configuration file (Permission denied)")
    }

    @Test func environmentErrorsNameTheVariable() async throws {
        let fixture = try ConfigurationFixture()
        defer { fixture.remove() }
        #expect(
            await fixture.failure(environment: ["SCENESYNCD_SOCKET_MAX_CLIENT": "5"])
                == "environment variable SCENESYNCD_SOCKET_MAX_CLIENT is not a configuration setting "
                + "(did you mean SCENESYNCD_SOCKET_MAX_CLIENTS?)")
        #expect(
            await fixture.failure(environment: ["SCENESYNCD_SOCKET_MAX_CLIENTS": "many"])
                == "environment variable SCENESYNCD_SOCKET_MAX_CLIENTS: expected a whole number, got \"many\"")
        #expect(
            await fixture.failure(environment: ["SCENESYNCD_SOCKET_MODE": "rw"])
                == "environment variable SCENESYNCD_SOCKET_MODE: \"rw\" is not an octal mode from \"0000\" to "
                + "\"0777\", like \"0660\"")
        #expect(
            await fixture.failure(environment: ["SCENESYNCD_ACCESS_WRITE_UIDS": "1000,x"])
                == "environment variable SCENESYNCD_ACCESS_WRITE_UIDS: expected a list of numeric IDs, got \"1000,x\"")
        #expect(
            await fixture.failure(environment: ["SCENESYNCD_SCENES_RESTORE_MISSING": "maybe"])
                == "environment variable SCENESYNCD_SCENES_RESTORE_MISSING: expected true or false, got \"maybe\"")
    }

    @Test func flagErrorsNameTheFlag() async throws {
        let fixture = try ConfigurationFixture()
        defer { fixture.remove() }
        #expect(
            await fixture.failure(overrides: ConfigurationOverrides(logLevel: "loud"))
                == "--log-level: \"loud\" is not one of trace, debug, info, notice, warning, error, critical")
        #expect(
            await fixture.failure(overrides: ConfigurationOverrides(scenesDirectory: ""))
                == "--scenes-dir: the path is empty")
        #expect(
            await fixture.failure(overrides: ConfigurationOverrides(configFile: "")) == "--config: the path is empty")
        let long = "/" + String(repeating: "s", count: 200)
        #expect(
            await fixture.failure(overrides: ConfigurationOverrides(socketPath: long))
                == "--socket: \"\(long)\" is 201 bytes long; a Unix socket path holds at most 107")
    }

    @Test func aDefaultSocketPathTooLongForAUnixSocketIsAnError() async throws {
        let fixture = try ConfigurationFixture()
        defer { fixture.remove() }
        let runtime = fixture.root + "/" + String(repeating: "r", count: 100)
        let message = await fixture.failure(environment: ["XDG_RUNTIME_DIR": runtime])
        #expect(
            message
                == "socket.path: the default \"\(runtime)/scenesync/scenesync.sock\" is longer than the 107 bytes a "
                + "Unix socket path holds; set socket.path or --socket")
        // Setting it is the way out.
        let fixed = try await fixture.load(environment: ["XDG_RUNTIME_DIR": runtime, "SCENESYNCD_SOCKET_PATH": "/s"])
        #expect(fixed.socketPath == "/s")
    }

    @Test func errorsAreOneLine() async throws {
        let fixture = try ConfigurationFixture()
        defer { fixture.remove() }
        for (text, _) in Self.fileErrors {
            try fixture.writeDefaultFile(text)
            let message = try #require(await fixture.failure())
            #expect(!message.contains("\n"))
            #expect(ConfigurationError(message: message).description == message)
        }
    }

    // MARK: Helpers

    /// A configuration with every key away from its default, as the file and environment tests set it.
    static func everyKeyChanged(configFile: String?) -> DaemonConfiguration {
        var configuration = DaemonConfiguration(defaults: PlatformDefaults.resolve(environment: [:], uid: 0))
        configuration.configFile = configFile
        configuration.scenesDirectory = "/srv/scenes"
        configuration.format = .codable
        configuration.restoreMissing = false
        configuration.maxFileBytes = 2048
        configuration.maxDepth = 16
        configuration.stateDirectory = "/srv/state"
        configuration.snapshotsKeep = 1
        configuration.historyMaxRevisions = 0
        configuration.socketPath = "/srv/app.sock"
        configuration.socketMode = 0o600
        configuration.maxClients = 2
        configuration.maxLineBytes = 4096
        configuration.subscriberQueue = 8
        configuration.stallTimeout = .milliseconds(1500)
        configuration.heartbeatInterval = .seconds(2)
        configuration.writeUIDs = [1000, 1001]
        configuration.writeGIDs = [0, 4_294_967_294]
        configuration.logLevel = .trace
        return configuration
    }
}

/// `config/scenesyncd.yaml` in the package.
private let shippedFile = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().appendingPathComponent("config/scenesyncd.yaml").path

/// The key each property of ``DaemonConfiguration`` is read from, by its path through the sections.
private let propertyKeys: [String: String] = [
    "scenes.directory": "scenes.directory",
    "scenes.format": "scenes.format",
    "scenes.restoreMissing": "scenes.restore_missing",
    "scenes.maxFileBytes": "scenes.max_file_bytes",
    "scenes.maxDepth": "scenes.max_depth",
    "scenes.writeWait": "scenes.write_wait_ms",
    "socket.maxPendingBytes": "socket.max_pending_bytes",
    "storage.stateDirectory": "state.directory",
    "storage.snapshotsKeep": "snapshots.keep",
    "storage.historyMaxRevisions": "history.max_revisions",
    "socket.path": "socket.path",
    "socket.mode": "socket.mode",
    "socket.maxClients": "socket.max_clients",
    "socket.maxLineBytes": "socket.max_line_bytes",
    "socket.subscriberQueue": "socket.subscriber_queue",
    "socket.stallTimeout": "socket.stall_timeout_s",
    "socket.heartbeatInterval": "socket.heartbeat_s",
    "access.writeUIDs": "access.write_uids",
    "access.writeGIDs": "access.write_gids",
    "logLevel": "log.level",
    "cluster.postgres": "cluster.postgres",
    "cluster.passwordFile": "cluster.password_file",
    "cluster.host": "cluster.host",
    "cluster.scenes": "cluster.scenes",
    "cluster.schema": "cluster.schema",
    "cluster.logKeep": "cluster.log_keep",
]

/// The keys the shipped file documents, mapped to whether each is set (`true`) or only shown commented out, but only
/// those preceded by a comment line explaining them.
private func documentedKeys(_ text: String) -> [String: Bool] {
    var keys: [String: Bool] = [:]
    var section = ""
    var previousWasComment = false
    for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
        let trimmed = line.drop { $0 == " " }
        if !line.hasPrefix(" "), !line.hasPrefix("#"), line.hasSuffix(":") {
            section = String(line.dropLast())
        } else if line.hasPrefix("  "), !section.isEmpty, let colon = trimmed.firstIndex(of: ":") {
            let commented = trimmed.hasPrefix("# ")
            let name = trimmed[trimmed.index(trimmed.startIndex, offsetBy: commented ? 2 : 0)..<colon]
            let key = "\(section).\(name)"
            if ConfigurationKey(rawValue: key) != nil, previousWasComment {
                keys[key] = !commented
            }
        }
        previousWasComment = trimmed.hasPrefix("#")
    }
    return keys
}

/// A temporary home, runtime and configuration directory for a non-root user, so no test reads the machine's files.
private struct ConfigurationFixture {
    let root: String

    init() throws {
        var template = Array((ConfigurationPath.normalized(NSTemporaryDirectory()) + "/ssc.XXXXXX").utf8CString)
        guard let created = mkdtemp(&template) else { throw POSIXError(.EIO) }
        root = String(cString: created)
        try FileManager.default.createDirectory(atPath: root + "/etc", withIntermediateDirectories: true)
    }

    var environment: [String: String] {
        [
            "HOME": root + "/home",
            "XDG_RUNTIME_DIR": root + "/run",
            "CONFIGURATION_DIRECTORY": root + "/etc",
            "PATH": "/usr/bin",
        ]
    }

    var defaultFile: String { root + "/etc/scenesyncd.yaml" }

    var defaults: DaemonConfiguration {
        DaemonConfiguration(defaults: PlatformDefaults.resolve(environment: environment, uid: 1000))
    }

    func remove() { try? FileManager.default.removeItem(atPath: root) }

    func write(_ name: String, _ text: String) throws -> String {
        let path = root + "/" + name
        try text.write(toFile: path, atomically: false, encoding: .utf8)
        return path
    }

    func writeDefaultFile(_ text: String) throws {
        try text.write(toFile: defaultFile, atomically: false, encoding: .utf8)
    }

    func load(
        overrides: ConfigurationOverrides = ConfigurationOverrides(),
        environment extra: [String: String] = [:],
        workingDirectory: String = "/nonexistent-cwd"
    ) async throws(ConfigurationError) -> DaemonConfiguration {
        try await DaemonConfiguration.load(
            overrides: overrides,
            environment: environment.merging(extra) { $1 },
            uid: 1000,
            workingDirectory: workingDirectory
        )
    }

    /// The error's message, or `nil` when loading succeeds.
    func failure(
        overrides: ConfigurationOverrides = ConfigurationOverrides(),
        environment extra: [String: String] = [:]
    ) async -> String? {
        do {
            _ = try await load(overrides: overrides, environment: extra)
            return nil
        } catch {
            return error.message
        }
    }
}
