import Testing

@testable import SceneSyncCore

/// The rule that finds the scenes directory for the daemon and for `SceneFile`: the environment variable, then the
/// configuration file's value, then the built-in default.
@Suite struct ScenesDirectoryTests {
    static let user: [String: String] = ["HOME": "/home/ada", "XDG_RUNTIME_DIR": "/run/user/1000"]

    func resolve(
        _ environment: [String: String], uid: UInt32 = 1000, workingDirectory: String? = "/work",
        configured: String? = nil
    ) throws(ScenesDirectory.Problem) -> String {
        try ScenesDirectory.resolve(environment: environment, uid: uid, workingDirectory: workingDirectory) {
            configured
        }
    }

    @Test func aUserGetsTheirRuntimeDirectory() throws {
        #expect(try resolve(Self.user) == "/run/user/1000/scenesync/scenes")
    }

    @Test func aUserWithoutXDGRuntimeDirGetsTheirStateDirectory() throws {
        #expect(try resolve(["HOME": "/home/ada"]) == "/home/ada/.local/state/scenesync/scenes")
        // The XDG specification says to ignore a relative XDG_RUNTIME_DIR.
        #expect(
            try resolve(["HOME": "/home/ada", "XDG_RUNTIME_DIR": "run"]) == "/home/ada/.local/state/scenesync/scenes")
    }

    @Test func rootGetsTheSystemDirectoryWhateverItsXDGRuntimeDir() throws {
        #expect(try resolve(["HOME": "/root", "XDG_RUNTIME_DIR": "/run/user/0"], uid: 0) == "/run/scenesync/scenes")
    }

    @Test func systemdsRuntimeDirectoryWinsForEveryone() throws {
        let environment = Self.user.merging(["RUNTIME_DIRECTORY": "/run/scenesyncd:/run/other"]) { $1 }
        #expect(try resolve(environment) == "/run/scenesyncd/scenes")
        #expect(try resolve(environment, uid: 0) == "/run/scenesyncd/scenes")
    }

    @Test func theConfigurationFileWinsOverTheDefaults() throws {
        let environment = Self.user.merging(["RUNTIME_DIRECTORY": "/run/scenesyncd"]) { $1 }
        #expect(try resolve(environment, configured: "/srv/scenes") == "/srv/scenes")
        #expect(try resolve(environment, uid: 0, configured: "/srv/scenes") == "/srv/scenes")
    }

    @Test func theEnvironmentVariableWinsOverTheFileWhichIsThenNotRead() throws {
        var read = false
        let directory = try ScenesDirectory.resolve(
            environment: Self.user.merging([ScenesDirectory.environmentVariable: "/srv/env//scenes/"]) { $1 },
            uid: 1000, workingDirectory: nil
        ) { () throws(ScenesDirectory.Problem) -> String? in
            read = true
            throw ScenesDirectory.Problem("the file must not be read")
        }
        #expect(directory == "/srv/env/scenes")
        #expect(!read)
    }

    @Test func aRelativeEnvironmentVariableIsTakenFromTheWorkingDirectory() throws {
        let environment = Self.user.merging([ScenesDirectory.environmentVariable: "./scenes/"]) { $1 }
        #expect(try resolve(environment, workingDirectory: "/work/app") == "/work/app/scenes")
        #expect(throws: ScenesDirectory.Problem.self) { try resolve(environment, workingDirectory: nil) }
    }

    @Test func anEmptyEnvironmentVariableCountsAsUnset() throws {
        let environment = Self.user.merging([ScenesDirectory.environmentVariable: ""]) { $1 }
        #expect(try resolve(environment) == "/run/user/1000/scenesync/scenes")
        #expect(try resolve(environment, configured: "/srv/scenes") == "/srv/scenes")
    }

    @Test func aFileThatCannotBeReadIsAProblem() {
        #expect(throws: ScenesDirectory.Problem("unreadable")) {
            try ScenesDirectory.resolve(environment: Self.user, uid: 1000, workingDirectory: "/") {
                () throws(ScenesDirectory.Problem) -> String? in
                throw ScenesDirectory.Problem("unreadable")
            }
        }
    }

    @Test func theVariablesToCopyIncludeEveryOneTheRuleReads() {
        #expect(
            Set(ScenesDirectory.environmentVariables)
                == [
                    "SCENESYNCD_SCENES_DIRECTORY", "RUNTIME_DIRECTORY", "CONFIGURATION_DIRECTORY", "XDG_RUNTIME_DIR",
                    "HOME",
                ])
    }
}

@Suite struct UserHomeTests {
    @Test func anAbsoluteHomeIsKept() {
        #expect(UserHome.filling(["HOME": "/home/ada"], uid: 0)["HOME"] == "/home/ada")
    }

    /// uid 0 is in every password database, with an absolute home.
    @Test func aMissingOrRelativeHomeComesFromThePasswordDatabase() {
        let filled = UserHome.filling([:], uid: 0)["HOME"]
        #expect(filled?.hasPrefix("/") == true)
        #expect(UserHome.filling(["HOME": "home"], uid: 0)["HOME"] == filled)
    }
}
