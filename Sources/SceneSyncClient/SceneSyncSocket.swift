import SceneSyncCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where the daemon's control socket is, so that clients find it with no configuration at all.
///
/// The rule mirrors the daemon's own default, so that `scenesync` and an app started by the same user talk to the
/// `scenesyncd` that user (or root, or systemd) started without being told where it is:
///
/// 1. `SCENESYNC_SOCKET`, when set and non-empty, wins: tests, containers and daemons started with `--socket` need a
///    way to point every client elsewhere at once. Next comes `SCENESYNCD_SOCKET_PATH`, the daemon's own
///    environment override of `socket.path`, so a shell that exported it for `scenesyncd` reaches it too.
/// 2. As root: `/run/scenesync.sock`.
/// 3. Otherwise `$XDG_RUNTIME_DIR/scenesync/scenesync.sock` when `XDG_RUNTIME_DIR` is an absolute path, else
///    `~/.local/state/scenesync/scenesync.sock` (`~` is `$HOME`, or the password database's home directory).
public enum SceneSyncSocket {
    /// The environment variable that overrides the default socket path for every client.
    public static let environmentVariable = "SCENESYNC_SOCKET"
    /// The daemon's environment override of `socket.path`, honoured second.
    public static let daemonEnvironmentVariable = "SCENESYNCD_SOCKET_PATH"

    /// The socket path for this process: its environment and its effective user.
    public static func defaultPath() -> String {
        var environment: [String: String] = [:]
        for name in [environmentVariable, daemonEnvironmentVariable, "XDG_RUNTIME_DIR", "HOME"] {
            if let value = getenv(name) { environment[name] = String(cString: value) }
        }
        // The daemon fills a missing HOME the same way, so both sides agree even under `env -i`.
        return defaultPath(environment: UserHome.filling(environment, uid: geteuid()), uid: geteuid())
    }

    /// The socket path for a given environment and user: a pure function, so every case can be tested.
    public static func defaultPath(environment: [String: String], uid: UInt32) -> String {
        for name in [environmentVariable, daemonEnvironmentVariable] {
            if let override = environment[name], !override.isEmpty { return override }
        }
        // The daemon's own rule, so that client and daemon can never disagree about the default.
        return PlatformDefaults.resolve(environment: environment, uid: uid).socketPath
    }
}
