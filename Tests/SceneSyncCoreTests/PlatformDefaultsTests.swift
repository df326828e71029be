import Testing

@testable import SceneSyncCore

@Suite struct PlatformDefaultsTests {
    @Test func rootWithoutSystemdUsesSystemLocations() {
        let defaults = PlatformDefaults.resolve(
            environment: ["HOME": "/root", "XDG_RUNTIME_DIR": "/run/user/0"],
            uid: 0
        )
        #expect(
            defaults
                == PlatformDefaults(
                    scenesDirectory: "/run/scenesync/scenes",
                    stateDirectory: "/var/lib/scenesync",
                    configFile: "/etc/scenesync/scenesyncd.yaml",
                    socketPath: "/run/scenesync.sock"
                ))
    }

    @Test func systemdDirectoriesWinForRoot() {
        let defaults = PlatformDefaults.resolve(
            environment: [
                "RUNTIME_DIRECTORY": "/run/scenesyncd",
                "STATE_DIRECTORY": "/var/lib/scenesyncd",
                "CONFIGURATION_DIRECTORY": "/etc/scenesyncd",
            ],
            uid: 0
        )
        #expect(
            defaults
                == PlatformDefaults(
                    scenesDirectory: "/run/scenesyncd/scenes",
                    stateDirectory: "/var/lib/scenesyncd",
                    configFile: "/etc/scenesyncd/scenesyncd.yaml",
                    socketPath: "/run/scenesync.sock"
                ))
    }

    @Test func eachSystemdDirectoryThatIsSetIsUsed() {
        let defaults = PlatformDefaults.resolve(environment: ["STATE_DIRECTORY": "/var/lib/custom"], uid: 0)
        #expect(defaults.scenesDirectory == "/run/scenesync/scenes")
        #expect(defaults.stateDirectory == "/var/lib/custom")
        #expect(defaults.configFile == "/etc/scenesync/scenesyncd.yaml")
    }

    @Test func systemdListsUseTheFirstDirectory() {
        let defaults = PlatformDefaults.resolve(
            environment: [
                "RUNTIME_DIRECTORY": "/run/a:/run/b",
                "STATE_DIRECTORY": ":/var/lib/a:/var/lib/b",
                "CONFIGURATION_DIRECTORY": "/etc/a/:/etc/b",
            ],
            uid: 0
        )
        #expect(defaults.scenesDirectory == "/run/a/scenes")
        #expect(defaults.stateDirectory == "/var/lib/a")
        #expect(defaults.configFile == "/etc/a/scenesyncd.yaml")
    }

    @Test func systemdDirectoriesWinForOtherUsers() {
        let defaults = PlatformDefaults.resolve(
            environment: [
                "HOME": "/home/app",
                "XDG_RUNTIME_DIR": "/run/user/1000",
                "RUNTIME_DIRECTORY": "/run/user/1000/scenesyncd",
                "STATE_DIRECTORY": "/home/app/.local/state/scenesyncd",
                "CONFIGURATION_DIRECTORY": "/home/app/.config/scenesyncd",
            ],
            uid: 1000
        )
        #expect(
            defaults
                == PlatformDefaults(
                    scenesDirectory: "/run/user/1000/scenesyncd/scenes",
                    stateDirectory: "/home/app/.local/state/scenesyncd",
                    configFile: "/home/app/.config/scenesyncd/scenesyncd.yaml",
                    socketPath: "/run/user/1000/scenesync/scenesync.sock"
                ))
    }

    @Test func userWithXDGRuntimeDirectory() {
        let defaults = PlatformDefaults.resolve(
            environment: ["HOME": "/home/app", "XDG_RUNTIME_DIR": "/run/user/1000"],
            uid: 1000
        )
        #expect(
            defaults
                == PlatformDefaults(
                    scenesDirectory: "/run/user/1000/scenesync/scenes",
                    stateDirectory: "/home/app/.local/state/scenesync",
                    configFile: "/home/app/.config/scenesync/scenesyncd.yaml",
                    socketPath: "/run/user/1000/scenesync/scenesync.sock"
                ))
    }

    @Test(arguments: [nil, "", "relative/run"])
    func userWithoutUsableXDGRuntimeDirectoryFallsBackToTheStateDirectory(runtime: String?) {
        var environment = ["HOME": "/home/app/"]
        environment["XDG_RUNTIME_DIR"] = runtime
        let defaults = PlatformDefaults.resolve(environment: environment, uid: 1000)
        #expect(
            defaults
                == PlatformDefaults(
                    scenesDirectory: "/home/app/.local/state/scenesync/scenes",
                    stateDirectory: "/home/app/.local/state/scenesync",
                    configFile: "/home/app/.config/scenesync/scenesyncd.yaml",
                    socketPath: "/home/app/.local/state/scenesync/scenesync.sock"
                ))
    }

    @Test func userWithoutHomeStillGetsAbsolutePaths() {
        let defaults = PlatformDefaults.resolve(environment: [:], uid: 1000)
        #expect(defaults.stateDirectory == "/.local/state/scenesync")
        #expect(defaults.configFile == "/.config/scenesync/scenesyncd.yaml")
    }

    @Test func pathsAreNormalized() {
        #expect(ConfigurationPath.normalized("/a//b/./c/") == "/a/b/c")
        #expect(ConfigurationPath.normalized("/") == "/")
        #expect(ConfigurationPath.absolute("x/../y", relativeTo: "/w/") == "/w/x/../y")
        #expect(ConfigurationPath.absolute("/abs", relativeTo: "/w") == "/abs")
        #expect(ConfigurationPath.absolute(".", relativeTo: "/w") == "/w")
    }
}
