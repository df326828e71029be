extension MirrorState {
    /// A value set through ``ScenePath/routes`` and the background writer that takes it: while either is there,
    /// the mirror shows that value rather than the daemon's.
    struct Binding {
        /// The latest value the writer has not taken yet: values set faster than they are written are coalesced.
        var value: [Route]?
        var writerRunning = false

        /// Nothing of the binding is pending, so what the mirror shows follows the daemon again.
        var idle: Bool { value == nil && !writerRunning }
    }
}
