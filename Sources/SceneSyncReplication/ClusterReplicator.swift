public import Logging
import PostgresNIO
public import SceneSyncCore
public import SceneSyncDaemon
public import ServiceLifecycle
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Replication across hosts through PostgreSQL (§9): pushes this host's changes to shared scenes and applies the
/// other hosts' changes, on one long-lived connection from a `PostgresClient`.
///
/// The engine only records changes here (``record(_:)``, a line queued for the journal's writer and a wake-up);
/// everything that touches the disk or the database runs in ``run()``: the journal's writer, its background flush,
/// and one session per connection: `LISTEN`, push what an answer was lost for, catch up
/// with every change after the cursor, then alternate between pushing this host's changes in order (in batches, one
/// transaction each) and applying the database's (the rows a notification carried, or those a query reads). Doing
/// both in one loop is what keeps the per-scene rules simple: a database change is never applied while one of this
/// host's pushes is between its commit and its answer.
public final class ClusterReplicator: ChangeReplicator, Service {
    let engine: Engine
    let journal: ReplicationJournal
    let client: PostgresClient
    let host: String
    let patterns: [ScenePattern]
    let schema: String
    let logKeep: Int
    let logger: Logger
    let endpoint: String
    let testHooks: ReplicationTestHooks

    /// What the replicator's tasks share under one lock. The sessions' bookkeeping and the feed's state are values
    /// of their own, so that each concern reads apart from the counters.
    struct Status {
        var connected = false
        var pushed = 0
        var received = 0
        var seen: Int64 = 0
        /// When the running session last heard from the database (see ``session(on:)``).
        var progress = ContinuousClock.now
        /// Whether the current outage was announced.
        var outage = false
        /// What wakes the running session and what its notifications announced.
        var feed = Feed()
        /// Whether the journal's writer last found the file lacking lines (see ``noteJournal(written:)``).
        var journalFailed = false
        /// The sessions started, and those whose work task has not ended.
        var sessions = Sessions()
        /// Set when replication stopped for a change of this host's name it cannot account for
        /// (``stopReplicating(_:)``): reported as a damaged journal.
        var stopped: ReplicationJournal.Damage? = nil
        /// The changes ``ReplicationJournal/adopt(holding:)`` recorded at this start, until the first session
        /// settles them (``settleAdopted(_:)``).
        var adopted: [ReplicationJournal.Pending] = []
    }
    let status = Mutex(Status())

    /// How long a connection attempt may take before the host announces that it works alone.
    static let connectGrace = Duration.seconds(3)

    public init(
        engine: Engine, configuration: DaemonConfiguration, stateDirectory: String, logger: Logger
    ) throws(ReplicationError) {
        guard let endpoint = configuration.clusterPostgres else {
            throw ReplicationError("cluster.postgres is not set")
        }
        self.engine = engine
        self.journal = try ReplicationJournal(directory: stateDirectory)
        self.host = configuration.clusterHost ?? ClusterReplicator.machineHostName()
        self.patterns = configuration.clusterScenes.map(ScenePattern.init)
        self.schema = configuration.clusterSchema
        self.logKeep = configuration.clusterLogKeep
        self.logger = logger
        self.endpoint = endpoint.description
        self.testHooks = ReplicationTestHooks(stateDirectory: stateDirectory)
        var password: String? = nil
        if let file = configuration.clusterPasswordFile {
            password = try ClusterReplicator.readPassword(file)
        }
        // The database connections live on the engine's own loop, as its clients' do: a row another host pushed
        // reaches the engine, and a change this host makes reaches the database, without waking another thread.
        self.client = PostgresClient(
            configuration: try ClusterReplicator.clientConfiguration(endpoint, password: password),
            eventLoopGroup: engine.loop.eventLoop, backgroundLogger: logger)
        let seen = journal.withState { $0.cursor }
        status.withLock { $0.seen = seen }
    }

    // MARK: - ChangeReplicator

    public func shares(_ scene: SceneID) -> Bool { patterns.contains { $0.matches(scene) } }

    public func record(_ change: LocalChange) {
        // A damaged journal can never push them, and holding them would only grow memory (see refuseToReplicate).
        guard journal.damage == nil else { return }
        // Queued and the writer woken; the writer wakes the session once the line is in the file.
        journal.recordLocal(
            scene: change.record.scene, bytes: change.fileBytes, format: change.record.format,
            origin: change.record.origin)
    }

    /// Returns also when the journal cannot be written now (a full disk, a failed flush; the writer logs it and
    /// rewrites the file whole once it can): a snapshot is not held up for it. The changes stay in the journal's
    /// state until that rewrite; a crash before it loses their lines, and the next start finds each again by its
    /// file (``reconcile(holding:)``), but for a scene new to the cluster, pushed only at its next change.
    public func persistRecords() async {
        guard journal.damage == nil, await journal.waitUntilWritten() == .noWriter else { return }
        // No writer runs (not started yet, or stopped): this caller takes its turn, on the same executor.
        let journal = journal
        _ = await engine.blockingIO.run { journal.writeQueued() }
    }

    public func scenesHeldDeleted() -> Set<SceneID> {
        // A damaged journal knows nothing (see record(_:)).
        guard journal.damage == nil else { return [] }
        return journal.scenesHeldDeleted(shares: shares)
    }

    public func reconcile(holding scenes: [SceneID: (bytes: [UInt8], format: SceneFormat)]) {
        // A damaged journal records nothing (see record(_:)).
        guard journal.damage == nil else { return }
        let recorded = journal.reconcile(holding: scenes, shares: shares)
        let adopted = journal.adopt(holding: scenes)
        if !adopted.isEmpty {
            status.withLock { $0.adopted = adopted }
            logger.notice(
                """
                shared scenes the cluster journal has no record of are pushed unless the database holds them, \
                or held them before (then this host takes the database's newer state)
                """,
                metadata: ["scenes": "\(adopted.count)"])
        }
        guard !recorded.isEmpty else { return }
        logger.notice(
            """
            shared scenes differ from what the cluster journal last saw this host hold, with nothing pending: \
            changes whose journal line a crash took; they are recorded again and pushed
            """,
            metadata: ["scenes": "\(recorded.map(\.scene.rawValue).joined(separator: ", "))"])
    }

    public func hasPending(_ scene: SceneID) -> Bool {
        journal.withState { $0.pendingCounts[scene, default: 0] > 0 }
    }

    public func statsJSON() -> [UInt8] {
        let current = status.withLock { ($0.connected, $0.pushed, $0.received, $0.seen) }
        let pending = journal.withState { $0.pending.count }
        var out: [UInt8] = Array(#"{"host":"#.utf8)
        JSONWriter.appendString(host, to: &out)
        out.append(contentsOf: #","connected":"#.utf8)
        out.append(contentsOf: (current.0 ? "true" : "false").utf8)
        out.append(contentsOf: #","pending":"#.utf8)
        JSONWriter.appendUInt(UInt64(pending), to: &out)
        out.append(contentsOf: #","pushed":"#.utf8)
        JSONWriter.appendUInt(UInt64(current.1), to: &out)
        out.append(contentsOf: #","received":"#.utf8)
        JSONWriter.appendUInt(UInt64(current.2), to: &out)
        out.append(contentsOf: #","cluster_version_seen":"#.utf8)
        JSONWriter.appendInt(current.3, to: &out)
        out.append(contentsOf: #","abandoned_sessions":"#.utf8)
        JSONWriter.appendUInt(UInt64(status.withLock { $0.sessions.abandoned.count }), to: &out)
        out.append(contentsOf: #","journal":"#.utf8)
        if let damage = journal.damage ?? status.withLock({ $0.stopped }) {
            out.append(contentsOf: #""damaged","journal_damage":"#.utf8)
            JSONWriter.appendString(damage.description, to: &out)
        } else {
            let unwritable = status.withLock { $0.journalFailed }
            out.append(contentsOf: (unwritable ? #""unwritable""# : #""ok""#).utf8)
        }
        out.append(UInt8(ascii: "}"))
        return out
    }

    // MARK: - Service

    public func run() async throws {
        if let damage = journal.damage {
            await refuseToReplicate(damage)
            return
        }
        if journal.skippedTornLine {
            logger.notice(
                "the cluster journal's last line was cut short by a crash and is skipped",
                metadata: ["journal": "\(journal.path)"])
        }
        logger.info(
            "replicating shared scenes through PostgreSQL",
            metadata: [
                "host": "\(host)", "database": "\(endpoint)", "pending": "\(journal.withState { $0.pending.count })",
            ])
        await cancelWhenGracefulShutdown {
            await withDiscardingTaskGroup { group in
                group.addTask { await self.client.run() }
                group.addTask { await self.sessions() }
                group.addTask { await self.syncJournal() }
                group.addTask { await self.writeJournal() }
            }
        }
        // A last chance for changes an earlier failure kept out of the file (a damaged journal is never written).
        let journal = journal
        noteJournal(written: await engine.blockingIO.run { journal.isWritten() })
        let abandoned = status.withLock { $0.sessions.abandoned }
        if !abandoned.isEmpty {
            for task in abandoned.values { task.cancel() }
            logger.error(
                "database sessions stalled inside the client never ended; they end with the process",
                metadata: ["abandoned": "\(abandoned.count)"])
        }
    }

    /// Connects, runs a session until the connection is lost, and tries again with exponential backoff. The
    /// client's pool backs off its own connection attempts too; this loop only paces how often it asks.
    func sessions() async {
        var delay = Duration.milliseconds(100)
        while !Task.isCancelled {
            var reason = "the connection closed"
            // The pool waits for a connection (up to its circuit breaker, 15 s) before it fails a lease: a database
            // that cannot be reached is announced sooner, while the attempt goes on.
            let slow = Task(executorPreference: engine.loop.taskExecutor) {
                try await Task.sleep(for: ClusterReplicator.connectGrace)
                await self.setConnected(false, reason: "no connection within \(ClusterReplicator.connectGrace)")
            }
            defer { slow.cancel() }
            do {
                try await client.withConnection { connection in
                    slow.cancel()
                    try await self.session(on: connection)
                }
            } catch let error as OwnRowsUnaccounted {
                await stopReplicating(error.damage)
                break
            } catch {
                reason = ClusterReplicator.describe(error)
            }
            if Task.isCancelled { break }
            // A session that got as far as connecting starts the backoff afresh.
            if status.withLock({ $0.connected }) { delay = .milliseconds(100) }
            await setConnected(false, reason: reason)
            try? await Task.sleep(for: delay)  // cancelled: the loop ends
            delay = min(delay * 2, .seconds(5))
        }
        status.withLock { $0.feed.wake = nil }
    }

    /// Announces a change of reachability, once per outage: to the log and, through the engine, to every
    /// subscription.
    func setConnected(_ connected: Bool, reason: String) async {
        let announce = status.withLock { status -> Bool in
            let announce = connected ? (status.outage || !status.connected) : !status.outage
            status.connected = connected
            status.outage = !connected
            return announce
        }
        guard announce else { return }
        if connected {
            logger.notice("connected to the cluster database", metadata: ["database": "\(endpoint)"])
        } else {
            logger.warning(
                "cluster database unavailable; working alone until it is back",
                metadata: ["database": "\(endpoint)", "reason": "\(reason)"])
        }
        engine.setClusterAvailable(connected, reason: reason)
    }

    // MARK: - Configuration

    static func clientConfiguration(
        _ endpoint: ClusterEndpoint, password: String?
    ) throws(ReplicationError) -> PostgresClient.Configuration {
        var configuration: PostgresClient.Configuration
        switch endpoint.transport {
        case .unixSocket(let path):
            configuration = PostgresClient.Configuration(
                unixSocketPath: path, username: endpoint.user, password: password, database: endpoint.database)
        case .tcp(let host, let port):
            var tls = TLSConfiguration.makeClientConfiguration()
            let mode: PostgresClient.Configuration.TLS
            switch endpoint.tls {
            case .disable:
                mode = .disable
            case .prefer:
                tls.certificateVerification = .none
                mode = .prefer(tls)
            case .require:
                tls.certificateVerification = .none
                mode = .require(tls)
            case .verifyFull:
                if let root = endpoint.rootCertificate { tls.trustRoots = .file(root) }
                tls.certificateVerification = .fullVerification
                mode = .require(tls)
            }
            configuration = PostgresClient.Configuration(
                host: host, port: port, username: endpoint.user, password: password, database: endpoint.database,
                tls: mode)
        }
        configuration.options.connectTimeout = .seconds(5)
        configuration.options.minimumConnections = 0
        configuration.options.maximumConnections = 2
        configuration.options.keepAliveBehavior = .init(frequency: .seconds(10))
        return configuration
    }

    static func readPassword(_ path: String) throws(ReplicationError) -> String {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            throw ReplicationError("cluster.password_file: cannot read \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = read(fd, &buffer, buffer.count)
        guard count >= 0 else { throw ReplicationError("cluster.password_file: cannot read \(path)") }
        let text = String(decoding: buffer[0..<count], as: UTF8.self)
        return String(text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false).first ?? "")
    }

    static func machineHostName() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count) == 0 else { return "localhost" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// A one-line reason for logs and warnings; never the password, which no error of the client holds.
    static func describe(_ error: any Error) -> String {
        if let error = error as? PSQLError {
            if let message = error.serverInfo?[.message] { return "server: \(message)" }
            if let underlying = error.underlying { return "\(error.code): \(underlying)" }
            return "\(error.code)"
        }
        return "\(error)".split(whereSeparator: \.isNewline).first.map(String.init) ?? "unknown error"
    }
}
