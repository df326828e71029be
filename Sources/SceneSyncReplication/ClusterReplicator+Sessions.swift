extension ClusterReplicator.Status {
    /// The bookkeeping of the database sessions, apart from the replication counters: only
    /// ``ClusterReplicator/session(on:)`` changes it, to find the work tasks that outlived their session.
    struct Sessions {
        /// Sessions started, which numbers them.
        var started: UInt64 = 0
        /// The sessions whose work task is still running.
        var working: Set<UInt64> = []
        /// Work tasks of sessions that returned (a stall) before their task ended (see
        /// ``ClusterReplicator/session(on:)``).
        var abandoned: [UInt64: Task<Void, Never>] = [:]
    }
}
