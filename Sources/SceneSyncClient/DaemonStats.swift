public import SceneSyncCore

/// The answer to `stats`: what an operator checks to see whether the daemon is healthy.
public struct DaemonStats: Sendable, Equatable {
    /// The last snapshot written since the daemon started.
    public struct LastSnapshot: Sendable, Equatable {
        /// The snapshot file, absolute.
        public var path: String
        /// The revision it captured.
        public var revision: UInt64
        /// RFC 3339, UTC.
        public var time: String
        /// `signal`, `phase`, `request` or `shutdown`.
        public var reason: String

        /// A record with these values, for tests.
        public init(path: String, revision: UInt64, time: String, reason: String) {
            self.path = path
            self.revision = revision
            self.time = time
            self.reason = reason
        }
    }

    /// Replication across hosts, when the daemon has it on.
    public struct Cluster: Sendable, Equatable {
        /// This host's `cluster.host`.
        public var host: String
        /// Whether the database is reachable now.
        public var connected: Bool
        /// Own changes not pushed yet.
        public var pending: Int
        /// Own changes committed, and other hosts' changes applied, since start.
        public var pushed: Int
        public var received: Int
        /// The highest database sequence this host has seen.
        public var clusterVersionSeen: UInt64

        /// A record with these values, for tests.
        public init(
            host: String, connected: Bool, pending: Int, pushed: Int, received: Int, clusterVersionSeen: UInt64
        ) {
            self.host = host
            self.connected = connected
            self.pending = pending
            self.pushed = pushed
            self.received = received
            self.clusterVersionSeen = clusterVersionSeen
        }
    }

    /// `nil` unless the daemon replicates through a cluster database.
    public var cluster: Cluster? = nil

    /// The daemon's clock when it answered.
    public var clock: Clock
    /// Scenes known now.
    public var scenes: Int
    /// Open connections.
    public var clients: Int
    /// Open subscriptions.
    public var subscribers: Int
    /// Seconds since the daemon started.
    public var uptimeSeconds: Int
    /// Events delivered since start.
    public var eventsSent: Int
    /// Events dropped for subscribers that fell behind, since start.
    public var eventsDropped: Int
    /// Subscriptions lagging right now.
    public var lagged: Int
    /// Scene files rejected since start.
    public var fileErrors: Int
    /// Snapshots written since start.
    public var snapshots: Int
    /// The last snapshot written since start; `nil` when none was.
    public var lastSnapshot: LastSnapshot?
    /// The daemon's resident memory.
    public var rssBytes: Int

    /// Stats with these values, for tests.
    public init(
        clock: Clock, scenes: Int, clients: Int, subscribers: Int, uptimeSeconds: Int, eventsSent: Int,
        eventsDropped: Int, lagged: Int, fileErrors: Int, snapshots: Int, lastSnapshot: LastSnapshot?, rssBytes: Int
    ) {
        self.clock = clock
        self.scenes = scenes
        self.clients = clients
        self.subscribers = subscribers
        self.uptimeSeconds = uptimeSeconds
        self.eventsSent = eventsSent
        self.eventsDropped = eventsDropped
        self.lagged = lagged
        self.fileErrors = fileErrors
        self.snapshots = snapshots
        self.lastSnapshot = lastSnapshot
        self.rssBytes = rssBytes
    }

    /// Decodes a `stats` response.
    public init(response: JSONValue) throws(SceneSyncConnectionError) {
        let what = "stats response"
        var last: LastSnapshot? = nil
        if let object = response["last_snapshot"], object != .null {
            let inner = "stats last_snapshot"
            last = LastSnapshot(
                path: try object.string("path", in: inner), revision: try object.uint("revision", in: inner),
                time: try object.string("time", in: inner), reason: try object.string("reason", in: inner))
        }
        self.init(
            clock: try response.clock(in: what), scenes: try response.int("scenes", in: what),
            clients: try response.int("clients", in: what), subscribers: try response.int("subscribers", in: what),
            uptimeSeconds: try response.int("uptime_s", in: what),
            eventsSent: try response.int("events_sent", in: what),
            eventsDropped: try response.int("events_dropped", in: what), lagged: try response.int("lagged", in: what),
            fileErrors: try response.int("file_errors", in: what), snapshots: try response.int("snapshots", in: what),
            lastSnapshot: last, rssBytes: try response.int("rss_bytes", in: what))
        if let object = response["cluster"], object != .null {
            let inner = "stats cluster"
            cluster = Cluster(
                host: try object.string("host", in: inner), connected: object["connected"]?.boolValue ?? false,
                pending: try object.int("pending", in: inner), pushed: try object.int("pushed", in: inner),
                received: try object.int("received", in: inner),
                clusterVersionSeen: try object.uint("cluster_version_seen", in: inner))
        }
    }
}
