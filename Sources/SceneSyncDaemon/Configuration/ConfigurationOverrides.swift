/// The command-line flags that override configuration (§8), as given, before any checking.
///
/// Kept as raw strings so that the loader can report a bad value with the flag's name, in the same one-line form as
/// every other configuration error.
public struct ConfigurationOverrides: Sendable, Equatable {
    /// `--config`: the file to read instead of the default one; it must then exist.
    public var configFile: String?
    /// `--scenes-dir`
    public var scenesDirectory: String?
    /// `--state-dir`
    public var stateDirectory: String?
    /// `--socket`
    public var socketPath: String?
    /// `--log-level`
    public var logLevel: String?

    public init(
        configFile: String? = nil,
        scenesDirectory: String? = nil,
        stateDirectory: String? = nil,
        socketPath: String? = nil,
        logLevel: String? = nil
    ) {
        self.configFile = configFile
        self.scenesDirectory = scenesDirectory
        self.stateDirectory = stateDirectory
        self.socketPath = socketPath
        self.logLevel = logLevel
    }
}
