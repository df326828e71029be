extension BenchOptions {
    /// What only `cluster` reads: its changes go through PostgreSQL, measured at a few paced rates and once unpaced.
    struct Cluster {
        /// The paced rates, one sub-run each.
        var rates: [Int]? = nil
        /// The changes of the unpaced burst whose convergence gives the changes/s.
        var burst: Int? = nil
    }
}
