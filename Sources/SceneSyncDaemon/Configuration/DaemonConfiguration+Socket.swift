extension DaemonConfiguration {
    /// The `socket` section: the control socket and the bounds of its connections, which the server applies as one
    /// set of limits.
    public struct Socket: Sendable, Equatable {
        /// `socket.path`
        public var path: String
        /// `socket.mode`, from the quoted octal string (`"0660"` is `0o660`).
        public var mode: UInt32
        /// `socket.max_clients`
        public var maxClients: Int
        /// `socket.max_line_bytes`
        public var maxLineBytes: Int
        /// `socket.subscriber_queue`
        public var subscriberQueue: Int
        /// `socket.max_pending_bytes`: unsent output held per connection beyond queued change events.
        public var maxPendingBytes: Int
        /// `socket.stall_timeout_s`
        public var stallTimeout: Duration
        /// `socket.heartbeat_s`
        public var heartbeatInterval: Duration
    }

    // The flat names predate the sections; they stay so that callers need not change.

    /// `socket.path`
    public var socketPath: String {
        get { socket.path }
        set { socket.path = newValue }
    }

    /// `socket.mode`, from the quoted octal string (`"0660"` is `0o660`).
    public var socketMode: UInt32 {
        get { socket.mode }
        set { socket.mode = newValue }
    }

    /// `socket.max_clients`
    public var maxClients: Int {
        get { socket.maxClients }
        set { socket.maxClients = newValue }
    }

    /// `socket.max_line_bytes`
    public var maxLineBytes: Int {
        get { socket.maxLineBytes }
        set { socket.maxLineBytes = newValue }
    }

    /// `socket.subscriber_queue`
    public var subscriberQueue: Int {
        get { socket.subscriberQueue }
        set { socket.subscriberQueue = newValue }
    }

    /// `socket.max_pending_bytes`: unsent output held per connection beyond queued change events.
    public var maxPendingBytes: Int {
        get { socket.maxPendingBytes }
        set { socket.maxPendingBytes = newValue }
    }

    /// `socket.stall_timeout_s`
    public var stallTimeout: Duration {
        get { socket.stallTimeout }
        set { socket.stallTimeout = newValue }
    }

    /// `socket.heartbeat_s`
    public var heartbeatInterval: Duration {
        get { socket.heartbeatInterval }
        set { socket.heartbeatInterval = newValue }
    }
}
