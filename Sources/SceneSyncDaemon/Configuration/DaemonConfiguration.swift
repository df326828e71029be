public import Logging
public import SceneSyncCore

/// Everything the daemon reads from its configuration (§8), checked and with every default filled in.
///
/// A plain value so that a reload can build a new one, compare it with the running one and apply the difference, and
/// so that tests can construct any configuration without files.
public struct DaemonConfiguration: Sendable, Equatable {
    /// The file actually read, if any: `nil` when no `--config` was given and the default file does not exist.
    public var configFile: String?
    /// `scenes.directory`
    public var scenesDirectory: String
    /// `scenes.format`: `auto`, `codable` or `array`.
    public var format: FormatPolicy
    /// `scenes.restore_missing`
    public var restoreMissing: Bool
    /// `scenes.max_file_bytes`
    public var maxFileBytes: Int
    /// `scenes.max_depth`
    public var maxDepth: Int
    /// `scenes.write_wait_ms`: how long a client change waits for an app that holds its scene file open for writing.
    public var writeWait: Duration
    /// `state.directory`
    public var stateDirectory: String
    /// `snapshots.keep`
    public var snapshotsKeep: Int
    /// `history.max_revisions`; 0 keeps no history.
    public var historyMaxRevisions: Int
    /// `socket.path`
    public var socketPath: String
    /// `socket.mode`, from the quoted octal string (`"0660"` is `0o660`).
    public var socketMode: UInt32
    /// `socket.max_clients`
    public var maxClients: Int
    /// `socket.max_line_bytes`
    public var maxLineBytes: Int
    /// `socket.subscriber_queue`
    public var subscriberQueue: Int
    /// `socket.max_pending_bytes`: unsent output held per connection beyond queued change events.
    public var maxPendingBytes: Int
    /// `socket.stall_timeout_s`
    public var stallTimeout: Duration
    /// `socket.heartbeat_s`
    public var heartbeatInterval: Duration
    /// `access.write_uids`
    public var writeUIDs: [UInt32]
    /// `access.write_gids`
    public var writeGIDs: [UInt32]
    /// `log.level`
    public var logLevel: Logger.Level
    /// `cluster.postgres`: replication across hosts (§9) is off when it is `nil`.
    public var clusterPostgres: ClusterEndpoint?
    /// `cluster.password_file`: the only place a database password comes from.
    public var clusterPasswordFile: String?
    /// `cluster.host`; `nil` means the machine's host name.
    public var clusterHost: String?
    /// `cluster.scenes`: glob patterns of the shared scenes.
    public var clusterScenes: [String]
    /// `cluster.schema`: where the daemon keeps its tables.
    public var clusterSchema: String
    /// `cluster.log_keep`: how many recent changes the database's log keeps before the daemon prunes it.
    public var clusterLogKeep: Int

    /// The built-in defaults, with the paths of `platform`; this is the configuration of a start with no file, no
    /// environment variables and no flags.
    public init(defaults platform: PlatformDefaults) {
        configFile = nil
        scenesDirectory = platform.scenesDirectory
        format = .auto
        restoreMissing = true
        maxFileBytes = 1 << 20
        maxDepth = 1024
        writeWait = .milliseconds(1000)
        stateDirectory = platform.stateDirectory
        snapshotsKeep = 3
        historyMaxRevisions = 10_000
        socketPath = platform.socketPath
        socketMode = 0o660
        maxClients = 1024
        maxLineBytes = 1 << 20
        subscriberQueue = 4096
        maxPendingBytes = 8 << 20
        stallTimeout = .seconds(60)
        heartbeatInterval = .seconds(30)
        writeUIDs = []
        writeGIDs = []
        logLevel = .info
        clusterPostgres = nil
        clusterPasswordFile = nil
        clusterHost = nil
        clusterScenes = ["*"]
        clusterSchema = "scenesync"
        clusterLogKeep = 10_000
    }

    /// The spellings of `log.level`, least severe first.
    static let logLevelNames = Logger.Level.allCases.map(\.rawValue)
}
