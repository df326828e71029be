extension ClusterReplicator.Status {
    /// How the running session is woken, and what its notifications told it since its feed last looked: one value,
    /// so that a new session starts it afresh in one assignment and nothing of the previous connection leaks into it.
    struct Feed {
        /// Wakes the running session when a local change is recorded.
        var wake: AsyncStream<Void>.Continuation? = nil
        /// The newest sequence a notification of the running session announced.
        var notified: Int64 = 0
        /// Log rows that notifications carried, not applied yet, in sequence order.
        var notifiedRows: [ClusterReplicator.LogRow] = []
        /// Whether the next turn of the session reads the log whatever the notifications said.
        var probeDue = false
    }
}
