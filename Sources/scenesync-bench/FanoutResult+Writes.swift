extension FanoutResult {
    /// What the writer got the server to accept, apart from what reached the subscribers: the server answers a
    /// change before every subscriber has it, so the two rates tell different things.
    struct Writes {
        /// Acknowledged `set`s (or `PUBLISH`es), errors included.
        var changes: Int
        var errors: Int
        /// From the first request sent to the last answer.
        var seconds: Double
        /// The writer thread's own CPU, apart from the readers'.
        var cpuSeconds: Double

        var perSecond: Double { Double(changes) / seconds }
    }
}
