import SceneSyncCore

extension ConfigurationLayer {
    /// What one source sets of the `scenes` section, mirroring ``DaemonConfiguration/Scenes`` so that the section
    /// is applied in one place.
    struct Scenes: Sendable, Equatable {
        var directory: String?
        var format: FormatPolicy?
        var restoreMissing: Bool?
        var maxFileBytes: Int?
        var maxDepth: Int?
        /// As written: the unit becomes a `Duration` only when applied.
        var writeWaitMilliseconds: Int?

        /// `section` with every value this source sets.
        func applied(to section: DaemonConfiguration.Scenes) -> DaemonConfiguration.Scenes {
            var result = section
            result.directory = directory ?? result.directory
            result.format = format ?? result.format
            result.restoreMissing = restoreMissing ?? result.restoreMissing
            result.maxFileBytes = maxFileBytes ?? result.maxFileBytes
            result.maxDepth = maxDepth ?? result.maxDepth
            result.writeWait = writeWaitMilliseconds.map { .milliseconds($0) } ?? result.writeWait
            return result
        }
    }
}
