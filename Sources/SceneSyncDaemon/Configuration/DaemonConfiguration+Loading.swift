import Configuration
import Glibc
import SceneSyncCore

extension DaemonConfiguration {
    /// Reads the configuration the way a start or a reload does: built-in defaults, overridden by the file, by
    /// `SCENESYNCD_*` environment variables, then by the flags (§8).
    ///
    /// Everything is checked before anything is returned, so a bad value stops a start (and `--check-config`) with
    /// one line naming where it came from, instead of surfacing later. Relative paths in flags and environment
    /// variables are resolved against the working directory now, so the daemon never depends on it afterwards;
    /// paths in the file must be absolute, because the daemon's working directory under systemd is `/` and a path
    /// relative to it would be a surprise.
    public static func load(
        overrides: ConfigurationOverrides,
        environment: [String: String],
        uid: UInt32
    ) async throws(ConfigurationError) -> DaemonConfiguration {
        try await load(overrides: overrides, environment: environment, uid: uid, workingDirectory: currentDirectory())
    }

    static func load(
        overrides: ConfigurationOverrides,
        environment: [String: String],
        uid: UInt32,
        workingDirectory: String?
    ) async throws(ConfigurationError) -> DaemonConfiguration {
        // Services started without a login often lack HOME; the password database still knows it.
        let environment = UserHome.filling(environment, uid: uid)
        let platform = PlatformDefaults.resolve(environment: environment, uid: uid)
        let resolver = PathResolver(workingDirectory: workingDirectory)

        let flags = try flagsProvider(overrides, resolver: resolver)
        let variables = try environmentProvider(environment, resolver: resolver)
        let explicitFile = try overrides.configFile.map { (path) throws(ConfigurationError) in
            try resolver.resolve(path, for: "--config")
        }
        let file = try await fileProvider(path: explicitFile ?? platform.configFile, explicit: explicitFile != nil)

        var fileLayer: ConfigurationLayer?
        if let file {
            fileLayer = try await ConfigurationLayer.read(
                from: ConfigReader(provider: file.provider),
                source: .file(path: file.path, lines: file.snapshot.lines)
            )
        }
        _ = try await ConfigurationLayer.read(from: ConfigReader(provider: variables), source: .environment)
        let flagLayer = try await ConfigurationLayer.read(from: ConfigReader(provider: flags), source: .flags)

        // Every value is known good now; one reader over all sources applies their precedence.
        var providers: [any ConfigProvider] = [flags, variables]
        if let file { providers.append(file.provider) }
        let merged = try await ConfigurationLayer.read(from: ConfigReader(providers: providers), source: .merged)

        var configuration = merged.applied(to: DaemonConfiguration(defaults: platform))
        configuration.configFile = file?.path
        if flagLayer.scenes.directory == nil {
            // Below the flag, the scenes directory is ScenesDirectory's: the rule SceneFile follows in an app, so
            // that the two cannot drift apart. The merged reader gives the same answer; this makes it the rule's.
            let configured = fileLayer?.scenes.directory
            do throws(ScenesDirectory.Problem) {
                configuration.scenes.directory = try ScenesDirectory.resolve(
                    environment: environment, uid: uid, workingDirectory: workingDirectory
                ) { configured }
            } catch {
                throw ConfigurationError(message: error.message)
            }
        }
        if merged.socket.path == nil, configuration.socketPath.utf8.count > ConfigurationLayer.maxSocketPathBytes {
            throw ConfigurationError(
                message: "socket.path: the default \"\(configuration.socketPath)\" is longer than the "
                    + "\(ConfigurationLayer.maxSocketPathBytes) bytes a Unix socket path holds; set socket.path or --socket"
            )
        }
        if configuration.clusterPostgres != nil, let passwordFile = configuration.clusterPasswordFile {
            // Read now, so a missing file stops the start; its content is read again where it is used.
            guard Glibc.access(passwordFile, R_OK) == 0 else {
                throw ConfigurationError(
                    message: "cluster.password_file: cannot read \(passwordFile) (\(errorText(errno)))")
            }
        }
        return configuration
    }

    /// The flags as a provider; only the flags that were given have a value.
    private static func flagsProvider(
        _ overrides: ConfigurationOverrides,
        resolver: PathResolver
    ) throws(ConfigurationError) -> InMemoryProvider {
        var values: [AbsoluteConfigKey: ConfigValue] = [:]
        let given: [(ConfigurationKey, String?)] = [
            (.scenesDirectory, overrides.scenesDirectory),
            (.stateDirectory, overrides.stateDirectory),
            (.socketPath, overrides.socketPath),
            (.logLevel, overrides.logLevel),
        ]
        for case (let key, let value?) in given {
            let text = key.kind.isPath ? try resolver.resolve(value, for: key.flag ?? key.rawValue) : value
            values[AbsoluteConfigKey(ConfigKey(key.rawValue))] = ConfigValue(.string(text), isSecret: false)
        }
        return InMemoryProvider(name: "command line", values: values)
    }

    /// The `SCENESYNCD_*` variables as a provider of the keys they name.
    ///
    /// An empty variable counts as unset, as systemd's `Environment=NAME=` resets one. A variable that starts like a
    /// key (`SCENESYNCD_SOCKET_…`) but names none is a typo and an error, as an unknown key in the file is; other
    /// `SCENESYNCD_*` names (a unit's `SCENESYNCD_OPTS`, say) are not ours and are left alone.
    private static func environmentProvider(
        _ environment: [String: String],
        resolver: PathResolver
    ) throws(ConfigurationError) -> KeyMappingProvider<EnvironmentVariablesProvider> {
        let sectionPrefixes = ConfigurationKey.sections.map {
            ConfigurationKey.environmentPrefix + $0.uppercased() + "_"
        }
        var variables: [String: String] = [:]
        for (name, value) in environment.sorted(by: { $0.key < $1.key })
        where name.hasPrefix(ConfigurationKey.environmentPrefix) {
            guard let key = ConfigurationKey(environmentVariable: name) else {
                guard sectionPrefixes.contains(where: name.hasPrefix) else { continue }
                throw ConfigurationError(
                    message: "environment variable \(name) is not a configuration setting"
                        + ConfigurationKey.suggestion(
                            for: name,
                            among: ConfigurationKey.allCases.map(\.environmentVariable)
                        )
                )
            }
            guard !value.isEmpty else { continue }
            variables[name] = key.kind.isPath ? try resolver.resolve(value, for: "environment variable \(name)") : value
        }
        // The provider spells `scenesyncd.socket.path` as SCENESYNCD_SOCKET_PATH.
        return EnvironmentVariablesProvider(environmentVariables: variables).prefixKeys(with: "scenesyncd")
    }

    /// The configuration file's provider, or `nil` when the default file does not exist.
    private static func fileProvider(
        path: String,
        explicit: Bool
    ) async throws(ConfigurationError) -> (
        path: String, provider: FileProvider<StrictYAMLSnapshot>, snapshot: StrictYAMLSnapshot
    )? {
        // Opening first gives precise errors; FileProvider's own file system errors are not public types.
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            let code = errno
            if code == ENOENT || code == ENOTDIR {
                guard explicit else { return nil }
                throw ConfigurationError(message: "\(path): the configuration file named by --config does not exist")
            }
            throw ConfigurationError(message: "\(path): cannot read the configuration file (\(errorText(code)))")
        }
        var status = stat()
        let isDirectory = fstat(descriptor, &status) == 0 && status.st_mode & S_IFMT == S_IFDIR
        Glibc.close(descriptor)
        if isDirectory {
            throw ConfigurationError(message: "\(path): is a directory, not a configuration file")
        }

        let provider: FileProvider<StrictYAMLSnapshot>
        do {
            // The reader-based initializer takes the path as a string, which spares a dependency on swift-system.
            let location = InMemoryProvider(values: ["filePath": ConfigValue(.string(path), isSecret: false)])
            provider = try await FileProvider<StrictYAMLSnapshot>(config: ConfigReader(provider: location))
        } catch let problem as StrictYAMLSnapshot.Problem {
            let position = [problem.line, problem.column].compactMap { $0.map { ":\($0)" } }.joined()
            throw ConfigurationError(message: "\(path)\(position): \(problem.message)")
        } catch {
            let reason = "\(error)".split(whereSeparator: \.isNewline).joined(separator: " ")
            throw ConfigurationError(message: "\(path): cannot read the configuration file (\(reason))")
        }
        guard let snapshot = provider.snapshot() as? StrictYAMLSnapshot else {
            throw ConfigurationError(message: "\(path): cannot read the configuration file")
        }
        return (path, provider, snapshot)
    }

    private static func currentDirectory() -> String? {
        guard let pointer = getcwd(nil, 0) else { return nil }
        defer { free(pointer) }
        return String(cString: pointer)
    }

    private static func errorText(_ code: Int32) -> String {
        strerror(code).map { String(cString: $0) } ?? "errno \(code)"
    }
}

/// Makes paths from flags and environment variables absolute against the working directory.
private struct PathResolver {
    let workingDirectory: String?

    func resolve(_ path: String, for origin: String) throws(ConfigurationError) -> String {
        guard !path.isEmpty else { throw ConfigurationError(message: "\(origin): the path is empty") }
        if path.hasPrefix("/") { return ConfigurationPath.normalized(path) }
        guard let workingDirectory else {
            throw ConfigurationError(
                message: "\(origin): cannot resolve the relative path \"\(path)\": the working directory is unknown"
            )
        }
        return ConfigurationPath.absolute(path, relativeTo: workingDirectory)
    }
}

extension ConfigurationKey.Kind {
    fileprivate var isPath: Bool {
        if case .path = self { return true }
        return false
    }
}
