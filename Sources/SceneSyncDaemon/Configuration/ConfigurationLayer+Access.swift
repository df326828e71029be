extension ConfigurationLayer {
    /// What one source sets of the `access` section, mirroring ``DaemonConfiguration/Access`` so that the section
    /// is applied in one place.
    struct Access: Sendable, Equatable {
        var writeUIDs: [UInt32]?
        var writeGIDs: [UInt32]?

        /// `section` with every value this source sets.
        func applied(to section: DaemonConfiguration.Access) -> DaemonConfiguration.Access {
            var result = section
            result.writeUIDs = writeUIDs ?? result.writeUIDs
            result.writeGIDs = writeGIDs ?? result.writeGIDs
            return result
        }
    }
}
