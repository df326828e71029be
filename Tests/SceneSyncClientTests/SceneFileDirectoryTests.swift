import Foundation
import SceneSyncCore
import Testing

@testable import SceneSyncClient

/// Where a `SceneFile` given no directory writes: the daemon's own rule, from an environment, a user and the
/// daemon's configuration file, and what it does when that file cannot be read.
@Suite struct SceneFileDirectoryTests {
    let root: URL

    init() throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("scenefile-dir-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
    }

    var home: String { root.path + "/home" }
    var userFile: String { home + "/.config/scenesync/scenesyncd.yaml" }

    func writeFile(_ path: String, _ text: String) throws {
        try FileManager.default.createDirectory(
            atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try text.write(toFile: path, atomically: true, encoding: .utf8)
    }

    func directory(_ environment: [String: String], uid: UInt32 = 1000) throws(SceneSyncClientError) -> String {
        try SceneFile.defaultDirectory(environment: environment, uid: uid, workingDirectory: "/work")
    }

    @Test func theVariableIsTheOneTheDaemonReads() {
        #expect(SceneFile.directoryEnvironmentVariable == "SCENESYNCD_SCENES_DIRECTORY")
    }

    @Test func withoutAFileTheBuiltInDefaultsApply() throws {
        defer { try? FileManager.default.removeItem(at: root) }
        #expect(
            try directory(["HOME": home, "XDG_RUNTIME_DIR": "/run/user/1000"]) == "/run/user/1000/scenesync/scenes")
        #expect(try directory(["HOME": home]) == home + "/.local/state/scenesync/scenes")
        #expect(try directory(["HOME": home, "RUNTIME_DIRECTORY": "/run/scenesyncd"]) == "/run/scenesyncd/scenes")
    }

    @Test func theUsersConfigurationFileIsRead() throws {
        defer { try? FileManager.default.removeItem(at: root) }
        try writeFile(userFile, "scenes:\n  directory: /srv/from-file\n")
        #expect(try directory(["HOME": home, "XDG_RUNTIME_DIR": "/run/user/1000"]) == "/srv/from-file")
    }

    @Test func systemdsConfigurationDirectoryNamesTheFile() throws {
        defer { try? FileManager.default.removeItem(at: root) }
        try writeFile(userFile, "scenes:\n  directory: /srv/from-home\n")
        try writeFile(root.path + "/etc/scenesyncd.yaml", "scenes: {directory: /srv/from-etc}\n")
        let environment = ["HOME": home, "CONFIGURATION_DIRECTORY": root.path + "/etc"]
        #expect(try directory(environment) == "/srv/from-etc")
        #expect(try directory(environment, uid: 0) == "/srv/from-etc")
    }

    @Test func theEnvironmentVariableWinsAndARelativeOneIsTakenFromTheWorkingDirectory() throws {
        defer { try? FileManager.default.removeItem(at: root) }
        try writeFile(userFile, "scenes:\n  directory: /srv/from-file\n")
        #expect(try directory(["HOME": home, "SCENESYNCD_SCENES_DIRECTORY": "/srv/env/"]) == "/srv/env")
        #expect(try directory(["HOME": home, "SCENESYNCD_SCENES_DIRECTORY": "env"]) == "/work/env")
        // An empty variable counts as unset, as for the daemon.
        #expect(try directory(["HOME": home, "SCENESYNCD_SCENES_DIRECTORY": ""]) == "/srv/from-file")
    }

    @Test func aFileThatCannotBeReadIsAnErrorNamingIt() throws {
        defer { try? FileManager.default.removeItem(at: root) }
        try writeFile(userFile, "scenes:\n  directory: \"/srv/open\n")
        #expect {
            _ = try directory(["HOME": home])
        } throws: { error in
            let error = error as? SceneSyncClientError
            return error?.code == .unknownScenesDirectory && error?.message.contains(userFile + ":2:") == true
        }
        try FileManager.default.removeItem(atPath: userFile)
        try FileManager.default.createDirectory(atPath: userFile, withIntermediateDirectories: false)
        #expect {
            _ = try directory(["HOME": home])
        } throws: { error in
            (error as? SceneSyncClientError)?.message.contains("is a directory") == true
        }
    }

    /// The error is kept by `init` and thrown by `read` and `write`, until a directory is set.
    @Test func anUnknownDirectoryFailsReadsAndWritesUntilOneIsSet() throws {
        defer { try? FileManager.default.removeItem(at: root) }
        let unknown = SceneSyncClientError(.unknownScenesDirectory, "cannot tell")
        var file = SceneFile(scene: "com.example.App.window-1") { () throws(SceneSyncClientError) -> String in
            throw unknown
        }
        #expect(file.directory == "")
        #expect(throws: unknown) { try file.write([1]) }
        #expect(throws: unknown) { try file.read(as: Int.self) }
        file.directory = root.path
        try file.write([1])
        #expect(try file.read(as: Int.self) == [1])
    }
}
