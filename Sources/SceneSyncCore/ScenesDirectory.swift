/// Where the scene files are when no `--scenes-dir` says otherwise (§8): the one rule that both the daemon and the
/// client library's `SceneFile` follow, so that an app that writes files and a daemon started in the same
/// environment always agree on the directory.
///
/// Highest first: ``environmentVariable`` (non-empty; a relative path is taken from the working directory, as the
/// daemon takes it at start), then `scenes.directory` in the configuration file, then the built-in default of
/// ``PlatformDefaults``. The flags are the daemon's alone, so they are not part of it: the daemon puts `--scenes-dir`
/// above this rule, and a client that must find a daemon started with it is told the directory.
///
/// The configuration file comes in as a closure, called only when no environment variable decides, because the
/// daemon and the client read it differently: the daemon with its strict YAML loader (Yams), the client, which links
/// no YAML library, with ``configured(inConfigurationFile:)``, which reads that one key and refuses what it cannot
/// read with certainty.
public enum ScenesDirectory {
    /// `scenes.directory`'s environment variable: the name swift-configuration's environment provider gives the
    /// daemon's key (`SCENESYNCD_` and the key in capitals, `.` as `_`).
    public static let environmentVariable = "SCENESYNCD_SCENES_DIRECTORY"

    /// The environment variables the rule reads, directly or through ``PlatformDefaults`` (besides `HOME`, which
    /// ``UserHome`` completes): what a client copies from its own environment.
    public static let environmentVariables = [
        environmentVariable, "RUNTIME_DIRECTORY", "CONFIGURATION_DIRECTORY", "XDG_RUNTIME_DIR", "HOME",
    ]

    /// Why the directory cannot be told: the message names the variable, the file and the line.
    public struct Problem: Error, Sendable, Equatable, CustomStringConvertible {
        /// The configuration file's line (1-based), when the problem is in one.
        public var line: Int?
        public var message: String

        public init(line: Int? = nil, _ message: String) {
            self.line = line
            self.message = message
        }

        public var description: String { line.map { "line \($0): \(message)" } ?? message }
    }

    /// The scenes directory of a daemon started by `uid` in `environment`, without `--scenes-dir`.
    ///
    /// - Parameters:
    ///   - environment: The daemon's environment, `HOME` completed by ``UserHome/filling(_:uid:)``.
    ///   - workingDirectory: The directory a relative ``environmentVariable`` is taken from; `nil` when unknown.
    ///   - configured: `scenes.directory` from the configuration file (absolute and normalized), or `nil` when the
    ///     file does not set it or does not exist. Called only when the environment does not decide.
    public static func resolve(
        environment: [String: String],
        uid: UInt32,
        workingDirectory: String?,
        configured: () throws(Problem) -> String?
    ) throws(Problem) -> String {
        if let value = environment[environmentVariable], !value.isEmpty {
            // An empty variable counts as unset, as systemd's `Environment=NAME=` resets one.
            if value.hasPrefix("/") { return ConfigurationPath.normalized(value) }
            guard let workingDirectory, workingDirectory.hasPrefix("/") else {
                throw Problem(
                    "\(environmentVariable): cannot resolve the relative path \"\(value)\": the working directory "
                        + "is unknown")
            }
            return ConfigurationPath.absolute(value, relativeTo: workingDirectory)
        }
        if let directory = try configured() { return directory }
        return PlatformDefaults.resolve(environment: environment, uid: uid).scenesDirectory
    }
}
