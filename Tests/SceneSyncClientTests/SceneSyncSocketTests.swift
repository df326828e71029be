import SceneSyncClient
import Testing

/// The default socket path must be the daemon's default for the same user and environment.
@Suite struct SceneSyncSocketTests {
    @Test func rootUsesRun() {
        #expect(
            SceneSyncSocket.defaultPath(environment: ["XDG_RUNTIME_DIR": "/run/user/0"], uid: 0)
                == "/run/scenesync.sock")
    }

    @Test func usersUseTheRuntimeDirectory() {
        #expect(
            SceneSyncSocket.defaultPath(
                environment: ["XDG_RUNTIME_DIR": "/run/user/1000/", "HOME": "/home/a"], uid: 1000)
                == "/run/user/1000/scenesync/scenesync.sock")
    }

    @Test func withoutRuntimeDirectoryTheStateDirectory() {
        #expect(
            SceneSyncSocket.defaultPath(environment: ["HOME": "/home/a"], uid: 1000)
                == "/home/a/.local/state/scenesync/scenesync.sock")
        // A relative XDG_RUNTIME_DIR is ignored, as the XDG specification (and the daemon) say.
        #expect(
            SceneSyncSocket.defaultPath(environment: ["HOME": "/home/a", "XDG_RUNTIME_DIR": "run"], uid: 1000)
                == "/home/a/.local/state/scenesync/scenesync.sock")
        #expect(
            SceneSyncSocket.defaultPath(environment: ["HOME": "/"], uid: 1000)
                == "/.local/state/scenesync/scenesync.sock")
    }

    @Test func environmentOverrides() {
        #expect(SceneSyncSocket.defaultPath(environment: ["SCENESYNC_SOCKET": "/tmp/s.sock"], uid: 0) == "/tmp/s.sock")
        #expect(
            SceneSyncSocket.defaultPath(
                environment: ["SCENESYNCD_SOCKET_PATH": "/tmp/d.sock", "XDG_RUNTIME_DIR": "/run/user/5"], uid: 5)
                == "/tmp/d.sock")
        #expect(
            SceneSyncSocket.defaultPath(
                environment: ["SCENESYNC_SOCKET": "/tmp/c.sock", "SCENESYNCD_SOCKET_PATH": "/tmp/d.sock"], uid: 5)
                == "/tmp/c.sock")
        #expect(SceneSyncSocket.defaultPath(environment: ["SCENESYNC_SOCKET": ""], uid: 0) == "/run/scenesync.sock")
    }
}
