import SceneSyncCore

/// Every configuration key (§8), with what the loader needs to read, check and explain it.
///
/// One table drives the YAML checks, the environment variable names, the flag names in errors and the tests, so a
/// key added here cannot be forgotten in one of them.
enum ConfigurationKey: String, CaseIterable, Sendable {
    case scenesDirectory = "scenes.directory"
    case scenesFormat = "scenes.format"
    case scenesRestoreMissing = "scenes.restore_missing"
    case scenesMaxFileBytes = "scenes.max_file_bytes"
    case scenesMaxDepth = "scenes.max_depth"
    case scenesWriteWait = "scenes.write_wait_ms"
    case stateDirectory = "state.directory"
    case snapshotsKeep = "snapshots.keep"
    case historyMaxRevisions = "history.max_revisions"
    case socketPath = "socket.path"
    case socketMode = "socket.mode"
    case socketMaxClients = "socket.max_clients"
    case socketMaxLineBytes = "socket.max_line_bytes"
    case socketSubscriberQueue = "socket.subscriber_queue"
    case socketMaxPendingBytes = "socket.max_pending_bytes"
    case socketStallTimeout = "socket.stall_timeout_s"
    case socketHeartbeat = "socket.heartbeat_s"
    case accessWriteUIDs = "access.write_uids"
    case accessWriteGIDs = "access.write_gids"
    case logLevel = "log.level"
    case clusterPostgres = "cluster.postgres"
    case clusterPasswordFile = "cluster.password_file"
    case clusterHost = "cluster.host"
    case clusterScenes = "cluster.scenes"
    case clusterSchema = "cluster.schema"
    case clusterLogKeep = "cluster.log_keep"

    /// The prefix of every environment variable the daemon reads; anything else under it is a typo.
    static let environmentPrefix = "SCENESYNCD_"

    /// The top-level YAML mappings.
    static let sections: [String] = {
        var sections: [String] = []
        for key in allCases where !sections.contains(key.section) {
            sections.append(key.section)
        }
        return sections
    }()

    /// What a value must look like; the YAML checks and the readers dispatch on it.
    enum Kind: Sendable {
        case path
        case choice([String])
        case bool
        /// An integer no smaller than the bound: limits of zero would make the daemon unusable, except where zero
        /// has a meaning of its own (no history, no wait for a writer).
        case integer(minimum: Int)
        /// An integer within the bounds the contract sets (§8).
        case boundedInteger(minimum: Int, maximum: Int)
        /// Seconds, fractions allowed, so tests can use short timeouts.
        case seconds
        /// A quoted octal string: YAML 1.1 reads an unquoted `0660` as 432 and `660` as 660, so only a string is
        /// unambiguous.
        case mode
        case ids
        /// Free text, checked by the key's own reader (a URL, a host name, an SQL identifier).
        case text
        /// A list of scene glob patterns.
        case patterns
    }

    var kind: Kind {
        switch self {
        case .scenesDirectory, .stateDirectory, .socketPath, .clusterPasswordFile: .path
        case .clusterPostgres, .clusterHost, .clusterSchema: .text
        case .clusterScenes: .patterns
        case .clusterLogKeep: .integer(minimum: 100)
        case .scenesFormat: .choice(FormatPolicy.allCases.map(\.rawValue))
        case .logLevel: .choice(DaemonConfiguration.logLevelNames)
        case .scenesRestoreMissing: .bool
        case .historyMaxRevisions: .integer(minimum: 0)
        case .scenesWriteWait: .boundedInteger(minimum: 0, maximum: 60_000)
        case .socketMaxPendingBytes: .boundedInteger(minimum: 64 << 10, maximum: 1 << 30)
        case .scenesMaxFileBytes, .scenesMaxDepth, .snapshotsKeep, .socketMaxClients, .socketMaxLineBytes,
            .socketSubscriberQueue:
            .integer(minimum: 1)
        case .socketStallTimeout, .socketHeartbeat: .seconds
        case .socketMode: .mode
        case .accessWriteUIDs, .accessWriteGIDs: .ids
        }
    }

    var section: String { String(rawValue.prefix { $0 != "." }) }

    /// `socket.max_clients` is `SCENESYNCD_SOCKET_MAX_CLIENTS`: the spelling swift-configuration's environment
    /// provider derives from the key `scenesyncd.socket.max_clients`.
    var environmentVariable: String {
        Self.environmentPrefix + String(rawValue.uppercased().map { $0 == "." ? "_" : $0 })
    }

    /// The command-line flag that sets this key, for errors about flag values.
    var flag: String? {
        switch self {
        case .scenesDirectory: "--scenes-dir"
        case .stateDirectory: "--state-dir"
        case .socketPath: "--socket"
        case .logLevel: "--log-level"
        default: nil
        }
    }

    init?(environmentVariable name: String) {
        guard let key = Self.allCases.first(where: { $0.environmentVariable == name }) else { return nil }
        self = key
    }

    /// ` (did you mean socket.max_clients?)` when one of `candidates` is close enough to `name` to be the intended
    /// spelling, else nothing: a wrong guess would mislead more than no guess.
    static func suggestion(for name: String, among candidates: [String]) -> String {
        let scored = candidates.map { ($0, editDistance(name, $0)) }.min { $0.1 < $1.1 }
        guard let (best, distance) = scored, distance <= max(2, best.count / 4) else { return "" }
        return " (did you mean \(best)?)"
    }

    /// Levenshtein distance over bytes; names are ASCII.
    private static func editDistance(_ lhs: String, _ rhs: String) -> Int {
        let a = Array(lhs.utf8)
        let b = Array(rhs.utf8)
        guard !a.isEmpty, !b.isEmpty else { return max(a.count, b.count) }
        var previous = Array(0...b.count)
        for i in 1...a.count {
            var current = [i] + [Int](repeating: 0, count: b.count)
            for j in 1...b.count {
                let substitution = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)
                current[j] = min(previous[j] + 1, current[j - 1] + 1, substitution)
            }
            previous = current
        }
        return previous[b.count]
    }
}
