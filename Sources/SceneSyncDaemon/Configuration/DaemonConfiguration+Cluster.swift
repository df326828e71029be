extension DaemonConfiguration {
    /// The `cluster` section: replication across hosts (§9), which only the replicator reads, so it can be handed
    /// the section alone.
    public struct Cluster: Sendable, Equatable {
        /// `cluster.postgres`: replication across hosts (§9) is off when it is `nil`.
        public var postgres: ClusterEndpoint?
        /// `cluster.password_file`: the only place a database password comes from.
        public var passwordFile: String?
        /// `cluster.host`; `nil` means the machine's host name.
        public var host: String?
        /// `cluster.scenes`: glob patterns of the shared scenes.
        public var scenes: [String]
        /// `cluster.schema`: where the daemon keeps its tables.
        public var schema: String
        /// `cluster.log_keep`: how many recent changes the database's log keeps before the daemon prunes it.
        public var logKeep: Int
    }

    // The flat names predate the sections; they stay so that callers need not change.

    /// `cluster.postgres`: replication across hosts (§9) is off when it is `nil`.
    public var clusterPostgres: ClusterEndpoint? {
        get { cluster.postgres }
        set { cluster.postgres = newValue }
    }

    /// `cluster.password_file`: the only place a database password comes from.
    public var clusterPasswordFile: String? {
        get { cluster.passwordFile }
        set { cluster.passwordFile = newValue }
    }

    /// `cluster.host`; `nil` means the machine's host name.
    public var clusterHost: String? {
        get { cluster.host }
        set { cluster.host = newValue }
    }

    /// `cluster.scenes`: glob patterns of the shared scenes.
    public var clusterScenes: [String] {
        get { cluster.scenes }
        set { cluster.scenes = newValue }
    }

    /// `cluster.schema`: where the daemon keeps its tables.
    public var clusterSchema: String {
        get { cluster.schema }
        set { cluster.schema = newValue }
    }

    /// `cluster.log_keep`: how many recent changes the database's log keeps before the daemon prunes it.
    public var clusterLogKeep: Int {
        get { cluster.logKeep }
        set { cluster.logKeep = newValue }
    }
}
