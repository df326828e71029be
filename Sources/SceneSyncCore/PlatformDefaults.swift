/// The built-in paths of §8, which depend on how the daemon was started.
///
/// Computed from the environment and the user ID only, without touching the file system, so that every combination
/// can be tested and `--check-config` shows what a start would use.
public struct PlatformDefaults: Sendable, Equatable {
    public var scenesDirectory: String
    public var stateDirectory: String
    public var configFile: String
    public var socketPath: String

    public init(scenesDirectory: String, stateDirectory: String, configFile: String, socketPath: String) {
        self.scenesDirectory = scenesDirectory
        self.stateDirectory = stateDirectory
        self.configFile = configFile
        self.socketPath = socketPath
    }

    /// Each of systemd's `RUNTIME_DIRECTORY`, `STATE_DIRECTORY` and `CONFIGURATION_DIRECTORY` that is set wins for
    /// its path; otherwise root gets the system locations and any other user the XDG ones. `~` is `$HOME` (`/` when
    /// it is unset, so the result is still absolute; the loader fills `HOME` from the password database first).
    public static func resolve(environment: [String: String], uid: UInt32) -> PlatformDefaults {
        let isRoot = uid == 0
        let home = absolute(environment["HOME"]).map { $0 == "/" ? "" : $0 } ?? ""
        let userState = home + "/.local/state/scenesync"
        // The XDG base directory specification says to ignore a relative XDG_RUNTIME_DIR.
        let userRuntime = absolute(environment["XDG_RUNTIME_DIR"]).map { $0 + "/scenesync" } ?? userState

        let scenesDirectory =
            systemdDirectory(environment["RUNTIME_DIRECTORY"]).map { $0 + "/scenes" }
            ?? (isRoot ? "/run/scenesync/scenes" : userRuntime + "/scenes")
        let stateDirectory =
            systemdDirectory(environment["STATE_DIRECTORY"])
            ?? (isRoot ? "/var/lib/scenesync" : userState)
        let configFile =
            systemdDirectory(environment["CONFIGURATION_DIRECTORY"]).map { $0 + "/scenesyncd.yaml" }
            ?? (isRoot ? "/etc/scenesync/scenesyncd.yaml" : home + "/.config/scenesync/scenesyncd.yaml")
        let socketPath = isRoot ? "/run/scenesync.sock" : userRuntime + "/scenesync.sock"
        return PlatformDefaults(
            scenesDirectory: scenesDirectory,
            stateDirectory: stateDirectory,
            configFile: configFile,
            socketPath: socketPath
        )
    }

    /// systemd passes a colon-separated list when a unit names several directories; the first is the daemon's.
    private static func systemdDirectory(_ value: String?) -> String? {
        guard let value else { return nil }
        let first = value.split(separator: ":", omittingEmptySubsequences: true).first.map(String.init)
        return absolute(first)
    }

    /// The value without trailing slashes, when it is an absolute path.
    private static func absolute(_ value: String?) -> String? {
        guard let value, value.hasPrefix("/") else { return nil }
        return ConfigurationPath.normalized(value)
    }
}
