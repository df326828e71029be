extension SlowResult {
    /// How the server dealt with the subscriber that stopped reading: dropping its events and telling it so with a
    /// resync, rather than slowing the healthy ones down or leaving a silent gap.
    struct Lag {
        /// Events the server dropped during the run, by its `stats`.
        var dropped: Int
        /// Subscriptions the server counted as lagging at the end.
        var lagged: Int
        /// Whether the slow subscriber, reading again, got a `resync` with reason `lagged`.
        var resynced: Bool
    }
}
