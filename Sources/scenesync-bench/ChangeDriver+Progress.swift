extension ChangeDriver {
    /// What the writer has done so far, which the scenario reads once it finished to compute its figures.
    struct Progress {
        var sent = 0
        var acknowledged = 0
        var errors = 0
        /// The revision in the newest response: `base + sent` at the end when nobody else changed anything.
        var lastRevision: UInt64 = 0
        var firstSend: Int64 = 0
        var lastAcknowledgement: Int64 = 0
        var cpuNanoseconds: Int64 = 0
    }
}
