extension FanoutResult {
    /// What the run cost the server and the bench itself: the price of a delivery rate, to be read beside it.
    struct Costs {
        /// The server's CPU over the run.
        var daemonCPU: Double
        /// The server's voluntary context switches over the run, all threads: its wake-ups.
        var daemonSwitches: Int
        /// The bench's own CPU (writer and readers): on a small machine it competes with the server.
        var clientCPU: Double
        /// The server's resident memory at the end.
        var daemonRSS: Int
    }
}
