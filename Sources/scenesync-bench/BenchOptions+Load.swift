extension BenchOptions {
    /// The load a scenario puts on the daemon: how long, how many subscribers, how fast, and how the bench itself
    /// keeps up, so that what is measured is the daemon's delivery, not the bench's.
    struct Load {
        /// Seconds per measured sub-run.
        var duration: Double? = nil
        /// Subscriber counts, one sub-run per count.
        var subscribers: [Int]? = nil
        /// Changes per second for the paced runs.
        var rate: Int? = nil
        /// Changes a saturating writer may be ahead of the slowest subscriber (flow control; below the queue limit).
        var window: Int? = nil
        /// Reader threads for the subscribers (default: one per 250 subscribers, at most 4).
        var threads: Int? = nil
    }
}
