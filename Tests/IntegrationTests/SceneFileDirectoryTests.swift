import Foundation
import SceneSyncClient
import SceneSyncCore
import Testing

/// A `SceneFile` given no directory and a daemon started in the same environment, with no flags, agree on the scenes
/// directory (SPEC §10): the daemon's `hello` names the directory the `SceneFile` finds, and a file written there
/// becomes a change the daemon reports.
///
/// The tests share one process, so the environment is not set here but given to the daemon and to
/// `SceneFile.defaultDirectory(environment:uid:workingDirectory:)` alike. ``ReadmeTests`` runs `SceneFile(scene:)`
/// itself in a child process, in a per-user daemon's environment.
@Suite struct SceneFileDirectoryTests {
    /// What decides the directory, and the directory it must be, under the daemon's temp root.
    struct Setting: Sendable, CustomTestStringConvertible {
        var name: String
        var environment: @Sendable (_ root: String) -> [String: String]
        var configuration: String?
        var expected: @Sendable (_ root: String) -> String
        var testDescription: String { name }
    }

    static let settings: [Setting] = [
        Setting(
            name: "systemd's RUNTIME_DIRECTORY", environment: { ["RUNTIME_DIRECTORY": $0 + "/runtime"] },
            expected: { $0 + "/runtime/scenes" }),
        Setting(
            name: "SCENESYNCD_SCENES_DIRECTORY",
            environment: { ["RUNTIME_DIRECTORY": $0 + "/runtime", "SCENESYNCD_SCENES_DIRECTORY": $0 + "/variable/"] },
            configuration: "scenes:\n  directory: /nonexistent/file-scenes\n",
            expected: { $0 + "/variable" }),
        Setting(
            name: "the default configuration file", environment: { ["RUNTIME_DIRECTORY": $0 + "/runtime"] },
            configuration: "scenes:\n  format: auto\n  directory: FILE  # from the file\n",
            expected: { $0 + "/from-file" }),
    ]

    @Test(arguments: settings)
    func aSceneFileWritesWhereTheDaemonWatches(_ setting: Setting) async throws {
        let daemon = try DaemonProcess()
        defer { daemon.cleanup() }
        let root = daemon.root.path
        let etc = root + "/etc"
        try FileManager.default.createDirectory(atPath: etc, withIntermediateDirectories: false)
        if let configuration = setting.configuration {
            try configuration.replacingOccurrences(of: "FILE", with: root + "/from-file")
                .write(toFile: etc + "/scenesyncd.yaml", atomically: true, encoding: .utf8)
        }
        daemon.withoutFlags = true
        // Every variable the rule reads is set, empty ones counting as unset, so the runner's own cannot decide.
        daemon.extraEnvironment = [
            "SCENESYNCD_SCENES_DIRECTORY": "", "RUNTIME_DIRECTORY": "", "XDG_RUNTIME_DIR": root + "/xdg",
            "CONFIGURATION_DIRECTORY": etc, "SCENESYNCD_STATE_DIRECTORY": daemon.state.path,
            "SCENESYNCD_SOCKET_PATH": daemon.socketPath,
        ].merging(setting.environment(root)) { $1 }
        try await daemon.start()

        let directory = try SceneFile.defaultDirectory(
            environment: daemon.environment, uid: geteuid(),
            workingDirectory: FileManager.default.currentDirectoryPath)
        let client = try await daemon.connect()
        #expect(try await client.ok("hello")["scenes_dir"]?.stringValue == directory)
        #expect(directory == setting.expected(root))

        try await client.subscribe()
        _ = try await client.events(until: "synced")
        try SceneFile(scene: "com.example.App.window-1", directory: directory).write([7])
        try await client.sync()
        let changes = client.takeEvents().named("change")
        #expect(changes.map { $0["scene"]?.stringValue } == ["com.example.App.window-1"])
        #expect(changes.first?["origin"] == (try json(#"{"source":"file"}"#)))
        #expect(changes.first?["path"] == (try json(#"[{"type":"Swift.Int","value":7}]"#)))
    }
}
