extension DaemonConfiguration {
    /// The `access` section: who may change scenes beyond the socket's owner, kept apart because it grants rights
    /// rather than bounding use.
    public struct Access: Sendable, Equatable {
        /// `access.write_uids`
        public var writeUIDs: [UInt32]
        /// `access.write_gids`
        public var writeGIDs: [UInt32]
    }

    // The flat names predate the sections; they stay so that callers need not change.

    /// `access.write_uids`
    public var writeUIDs: [UInt32] {
        get { access.writeUIDs }
        set { access.writeUIDs = newValue }
    }

    /// `access.write_gids`
    public var writeGIDs: [UInt32] {
        get { access.writeGIDs }
        set { access.writeGIDs = newValue }
    }
}
