import Histogram

/// What a group of subscribers received, merged over reader threads.
struct SubscriberTotals {
    var histogram = Histogram<UInt64>.latency()
    /// `change` events received.
    var delivered = 0
    /// Events whose revision (or file sequence) was not newer than the previous one.
    var duplicates = 0
    /// Revisions missing between consecutive events of a subscription (not explained by a `resync`).
    var gaps = 0
    /// File writes that reached subscribers only as part of a later write of the same file.
    var coalesced = 0
    var resyncs = 0
    /// Events whose change had no recorded send time (another client's change, or past the table).
    var unstamped = 0
    var bytes = 0
    /// Connections the daemon closed.
    var closed = 0
    /// `Monotonic.now()` of the last `change` received.
    var lastReceipt: Int64 = 0
    /// CPU time of the reader threads.
    var cpuNanoseconds: Int64 = 0

    mutating func merge(_ other: SubscriberTotals) {
        histogram.add(other.histogram)
        delivered += other.delivered
        duplicates += other.duplicates
        gaps += other.gaps
        coalesced += other.coalesced
        resyncs += other.resyncs
        unstamped += other.unstamped
        bytes += other.bytes
        closed += other.closed
        lastReceipt = max(lastReceipt, other.lastReceipt)
        cpuNanoseconds += other.cpuNanoseconds
    }
}
