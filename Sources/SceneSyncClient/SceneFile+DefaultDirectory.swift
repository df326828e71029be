import SceneSyncCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension SceneFile {
    /// The environment variable that sets the daemon's scenes directory (`scenes.directory`); a `SceneFile` given no
    /// directory honours it too, so that an app and a daemon started from the same shell agree.
    public static let directoryEnvironmentVariable = ScenesDirectory.environmentVariable

    /// The scenes directory that a daemon started by this process's user, in this process's environment and working
    /// directory, would use: the daemon's own rule (`ScenesDirectory` in SceneSyncCore), without its flags.
    ///
    /// Highest first: `SCENESYNCD_SCENES_DIRECTORY`; `scenes.directory` in the daemon's default configuration file
    /// (`$CONFIGURATION_DIRECTORY/scenesyncd.yaml`, `/etc/scenesync/scenesyncd.yaml` for root,
    /// `~/.config/scenesync/scenesyncd.yaml` for anyone else); `$RUNTIME_DIRECTORY/scenes`; and
    /// `/run/scenesync/scenes` for root, `$XDG_RUNTIME_DIR/scenesync/scenes` (or `~/.local/state/scenesync/scenes`)
    /// for anyone else. A daemon started with `--scenes-dir` or `--config` is not found this way: give its directory
    /// to ``init(scene:directory:)``.
    ///
    /// - Throws: ``SceneSyncClientError`` with ``SceneSyncClientError/Code/unknownScenesDirectory`` when the
    ///   configuration file cannot be read, or sets `scenes.directory` in a form this library does not read (the
    ///   library has no YAML parser; it reads the style of the shipped `scenesyncd.yaml`, and refuses what it cannot
    ///   read with certainty rather than guess a directory the daemon does not watch).
    public static func defaultDirectory() throws(SceneSyncClientError) -> String {
        var environment: [String: String] = [:]
        for name in ScenesDirectory.environmentVariables {
            if let value = getenv(name) { environment[name] = String(cString: value) }
        }
        return try defaultDirectory(environment: environment, uid: geteuid(), workingDirectory: currentDirectory())
    }

    /// ``defaultDirectory()`` for a given environment, user and working directory, which a relative
    /// `SCENESYNCD_SCENES_DIRECTORY` is taken from. `HOME` is completed from the password database when it is missing,
    /// as the daemon completes it. The configuration file the environment names is read.
    public static func defaultDirectory(
        environment: [String: String],
        uid: UInt32,
        workingDirectory: String? = nil
    ) throws(SceneSyncClientError) -> String {
        let environment = UserHome.filling(environment, uid: uid)
        let file = PlatformDefaults.resolve(environment: environment, uid: uid).configFile
        do throws(ScenesDirectory.Problem) {
            return try ScenesDirectory.resolve(
                environment: environment, uid: uid, workingDirectory: workingDirectory
            ) { () throws(ScenesDirectory.Problem) -> String? in
                try configuredDirectory(in: file)
            }
        } catch {
            throw SceneSyncClientError(
                .unknownScenesDirectory,
                "cannot tell the daemon's scenes directory: \(error.message); give SceneFile a directory, or set "
                    + ScenesDirectory.environmentVariable
            )
        }
    }

    /// `scenes.directory` in the configuration file at `path`; `nil` when there is no file, as the daemon takes a
    /// missing default file for "all defaults".
    private static func configuredDirectory(in path: String) throws(ScenesDirectory.Problem) -> String? {
        let bytes: [UInt8]
        do throws(WholeFile.Failure) {
            bytes = try WholeFile.read(path)
        } catch {
            if error.call == "open", error.code == ENOENT || error.code == ENOTDIR { return nil }
            if error.code == EISDIR {
                throw ScenesDirectory.Problem("\(path): is a directory, not a configuration file")
            }
            throw ScenesDirectory.Problem("\(path): cannot read the configuration file (\(error.reason))")
        }
        do throws(ScenesDirectory.Problem) {
            return try ScenesDirectory.configured(inConfigurationFile: bytes)
        } catch {
            throw ScenesDirectory.Problem("\(path)\(error.line.map { ":\($0)" } ?? ""): \(error.message)")
        }
    }

    private static func currentDirectory() -> String? {
        guard let pointer = getcwd(nil, 0) else { return nil }
        defer { free(pointer) }
        return String(cString: pointer)
    }
}
