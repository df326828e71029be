public import Logging
public import SceneSyncCore

/// Everything the daemon reads from its configuration (§8), checked and with every default filled in.
///
/// A plain value so that a reload can build a new one, compare it with the running one and apply the difference, and
/// so that tests can construct any configuration without files. Its values are grouped as the file's sections are,
/// so that each topic reads as one small value; the flat names (`socketPath`, `clusterHost`, …) forward to them.
public struct DaemonConfiguration: Sendable, Equatable {
    /// The file actually read, if any: `nil` when no `--config` was given and the default file does not exist.
    public var configFile: String?
    /// `scenes.*`
    public var scenes: Scenes
    /// `state.directory`, `snapshots.keep` and `history.max_revisions`
    public var storage: Storage
    /// `socket.*`
    public var socket: Socket
    /// `access.*`
    public var access: Access
    /// `log.level`
    public var logLevel: Logger.Level
    /// `cluster.*`
    public var cluster: Cluster

    /// The built-in defaults, with the paths of `platform`; this is the configuration of a start with no file, no
    /// environment variables and no flags.
    public init(defaults platform: PlatformDefaults) {
        configFile = nil
        scenes = Scenes(
            directory: platform.scenesDirectory, format: .auto, restoreMissing: true, maxFileBytes: 1 << 20,
            maxDepth: 1024, writeWait: .milliseconds(1000))
        storage = Storage(stateDirectory: platform.stateDirectory, snapshotsKeep: 3, historyMaxRevisions: 10_000)
        socket = Socket(
            path: platform.socketPath, mode: 0o660, maxClients: 1024, maxLineBytes: 1 << 20, subscriberQueue: 4096,
            maxPendingBytes: 8 << 20, stallTimeout: .seconds(60), heartbeatInterval: .seconds(30))
        access = Access(writeUIDs: [], writeGIDs: [])
        logLevel = .info
        cluster = Cluster(
            postgres: nil, passwordFile: nil, host: nil, scenes: ["*"], schema: "scenesync", logKeep: 10_000)
    }

    /// The spellings of `log.level`, least severe first.
    static let logLevelNames = Logger.Level.allCases.map(\.rawValue)
}
