extension SlowResult {
    /// The server's resident memory over the run: while a subscriber reads nothing it must stay bounded by the
    /// queue limit instead of growing with the backlog.
    struct Memory {
        /// Before the stream started.
        var start: Int
        /// The highest of the samples taken about every 100 ms while the stream ran.
        var peak: Int
        /// Once every healthy subscriber caught up.
        var end: Int
    }
}
