extension ConfigurationLayer {
    /// What one source sets of the `cluster` section, mirroring ``DaemonConfiguration/Cluster`` so that the section
    /// is applied in one place.
    struct Cluster: Sendable, Equatable {
        var postgres: ClusterEndpoint?
        var passwordFile: String?
        var host: String?
        var scenes: [String]?
        var schema: String?
        var logKeep: Int?

        /// `section` with every value this source sets.
        func applied(to section: DaemonConfiguration.Cluster) -> DaemonConfiguration.Cluster {
            var result = section
            result.postgres = postgres ?? result.postgres
            result.passwordFile = passwordFile ?? result.passwordFile
            result.host = host ?? result.host
            result.scenes = scenes ?? result.scenes
            result.schema = schema ?? result.schema
            result.logKeep = logKeep ?? result.logKeep
            return result
        }
    }
}
