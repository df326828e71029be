extension ConfigurationLayer {
    /// What one source sets of the `socket` section, mirroring ``DaemonConfiguration/Socket`` so that the section
    /// is applied in one place.
    struct Socket: Sendable, Equatable {
        var path: String?
        var mode: UInt32?
        var maxClients: Int?
        var maxLineBytes: Int?
        var subscriberQueue: Int?
        var maxPendingBytes: Int?
        var stallTimeout: Duration?
        var heartbeatInterval: Duration?

        /// `section` with every value this source sets.
        func applied(to section: DaemonConfiguration.Socket) -> DaemonConfiguration.Socket {
            var result = section
            result.path = path ?? result.path
            result.mode = mode ?? result.mode
            result.maxClients = maxClients ?? result.maxClients
            result.maxLineBytes = maxLineBytes ?? result.maxLineBytes
            result.subscriberQueue = subscriberQueue ?? result.subscriberQueue
            result.maxPendingBytes = maxPendingBytes ?? result.maxPendingBytes
            result.stallTimeout = stallTimeout ?? result.stallTimeout
            result.heartbeatInterval = heartbeatInterval ?? result.heartbeatInterval
            return result
        }
    }
}
