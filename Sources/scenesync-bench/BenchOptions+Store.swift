extension BenchOptions {
    /// The scenes a scenario generates: the same seed gives the same scenes, so runs compare.
    struct Store {
        /// Scene counts (`core`: the store size; `scale`: one run per count; `file-latency`, `cluster`: the number
        /// of files).
        var scenes: [Int]? = nil
        /// `core`: timed operations per measurement.
        var operations = 20_000
        var seed: UInt64 = 1
    }
}
