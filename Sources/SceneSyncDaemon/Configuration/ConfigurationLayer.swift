import Configuration
import Logging
import SceneSyncCore

/// The values one source of configuration sets, each checked; `nil` where the source says nothing.
///
/// Reading a layer per source, before the merged read, is what lets an error name the file line, environment
/// variable or flag the bad value came from, and catches a bad value even when a higher source hides it. Its values
/// are grouped as ``DaemonConfiguration``'s are, so that each section of a layer applies to its own section.
struct ConfigurationLayer: Sendable, Equatable {
    var scenes = Scenes()
    var storage = Storage()
    var socket = Socket()
    var access = Access()
    var logLevel: Logger.Level?
    var cluster = Cluster()

    /// Where a layer's values come from, for the start of error messages.
    enum Source: Sendable {
        case file(path: String, lines: [ConfigurationKey: Int])
        case environment
        case flags
        /// All sources through one reader; its values were all checked in their own layers already.
        case merged

        func describe(_ key: ConfigurationKey) -> String {
            switch self {
            case .file(let path, let lines):
                lines[key].map { "\(path):\($0): \(key.rawValue)" } ?? "\(path): \(key.rawValue)"
            case .environment: "environment variable \(key.environmentVariable)"
            case .flags: key.flag ?? key.rawValue
            case .merged: key.rawValue
            }
        }
    }

    /// The longest path a Unix socket address holds, without its terminating NUL (`sun_path` is 108 bytes).
    static let maxSocketPathBytes = 107
    /// Longer timeouts than a day are mistakes, and `Duration` must not overflow.
    static let maxSeconds = 86_400.0

    /// Reads and checks every key `reader` has a value for.
    static func read(from reader: ConfigReader, source: Source) async throws(ConfigurationError) -> ConfigurationLayer {
        let values = Values(reader: reader, source: source)
        var layer = ConfigurationLayer()
        layer.scenes.directory = try await values.path(.scenesDirectory)
        layer.scenes.format = try await values.choice(.scenesFormat).flatMap(FormatPolicy.init(rawValue:))
        layer.scenes.restoreMissing = try await values.bool(.scenesRestoreMissing)
        layer.scenes.maxFileBytes = try await values.integer(.scenesMaxFileBytes)
        layer.scenes.maxDepth = try await values.integer(.scenesMaxDepth)
        layer.scenes.writeWaitMilliseconds = try await values.integer(.scenesWriteWait)
        layer.storage.stateDirectory = try await values.path(.stateDirectory)
        layer.storage.snapshotsKeep = try await values.integer(.snapshotsKeep)
        layer.storage.historyMaxRevisions = try await values.integer(.historyMaxRevisions)
        layer.socket.path = try await values.path(.socketPath)
        layer.socket.mode = try await values.mode(.socketMode)
        layer.socket.maxClients = try await values.integer(.socketMaxClients)
        layer.socket.maxLineBytes = try await values.integer(.socketMaxLineBytes)
        layer.socket.subscriberQueue = try await values.integer(.socketSubscriberQueue)
        layer.socket.maxPendingBytes = try await values.integer(.socketMaxPendingBytes)
        layer.socket.stallTimeout = try await values.seconds(.socketStallTimeout)
        layer.socket.heartbeatInterval = try await values.seconds(.socketHeartbeat)
        layer.access.writeUIDs = try await values.ids(.accessWriteUIDs)
        layer.access.writeGIDs = try await values.ids(.accessWriteGIDs)
        layer.logLevel = try await values.choice(.logLevel).flatMap(Logger.Level.init(rawValue:))
        layer.cluster.postgres = try await values.endpoint(.clusterPostgres)
        layer.cluster.passwordFile = try await values.path(.clusterPasswordFile)
        layer.cluster.host = try await values.hostName(.clusterHost)
        layer.cluster.scenes = try await values.patterns(.clusterScenes)
        layer.cluster.schema = try await values.identifier(.clusterSchema)
        layer.cluster.logKeep = try await values.integer(.clusterLogKeep)
        return layer
    }

    /// `configuration` with every value this layer sets.
    func applied(to configuration: DaemonConfiguration) -> DaemonConfiguration {
        var result = configuration
        result.scenes = scenes.applied(to: result.scenes)
        result.storage = storage.applied(to: result.storage)
        result.socket = socket.applied(to: result.socket)
        result.access = access.applied(to: result.access)
        result.logLevel = logLevel ?? result.logLevel
        result.cluster = cluster.applied(to: result.cluster)
        return result
    }
}

extension ConfigurationLayer {
    /// Typed reads of one source, turning swift-configuration's conversion errors into messages about the key.
    private struct Values {
        let reader: ConfigReader
        let source: Source

        func path(_ key: ConfigurationKey) async throws(ConfigurationError) -> String? {
            guard let text = try await string(key) else { return nil }
            guard !text.isEmpty else { throw failure(key, "the path is empty") }
            // Flags and environment variables were made absolute already; only the file can get here.
            guard text.hasPrefix("/") else {
                throw failure(key, "\(quoted(text)) is not an absolute path (paths in the file must be absolute)")
            }
            let path = ConfigurationPath.normalized(text)
            if key == .socketPath, path.utf8.count > ConfigurationLayer.maxSocketPathBytes {
                throw failure(
                    key,
                    "\(quoted(path)) is \(path.utf8.count) bytes long; a Unix socket path holds at most "
                        + "\(ConfigurationLayer.maxSocketPathBytes)"
                )
            }
            return path
        }

        func choice(_ key: ConfigurationKey) async throws(ConfigurationError) -> String? {
            guard case .choice(let names) = key.kind, let text = try await string(key) else { return nil }
            guard names.contains(text) else {
                throw failure(key, "\(quoted(text)) is not one of \(names.joined(separator: ", "))")
            }
            return text
        }

        func bool(_ key: ConfigurationKey) async throws(ConfigurationError) -> Bool? {
            do {
                return try await reader.fetchBool(forKey: ConfigKey(key.rawValue))
            } catch {
                throw await mismatch(key, expected: "true or false")
            }
        }

        func integer(_ key: ConfigurationKey) async throws(ConfigurationError) -> Int? {
            let value: Int?
            do {
                value = try await reader.fetchInt(forKey: ConfigKey(key.rawValue))
            } catch {
                throw await mismatch(key, expected: "a whole number")
            }
            guard let value else { return nil }
            if case .integer(let minimum) = key.kind, value < minimum {
                throw failure(key, "must be at least \(minimum), got \(value)")
            }
            if case .boundedInteger(let minimum, let maximum) = key.kind, value < minimum || value > maximum {
                throw failure(key, "must be from \(minimum) to \(maximum), got \(value)")
            }
            return value
        }

        func seconds(_ key: ConfigurationKey) async throws(ConfigurationError) -> Duration? {
            let value: Double?
            do {
                value = try await reader.fetchDouble(forKey: ConfigKey(key.rawValue))
            } catch {
                throw await mismatch(key, expected: "a number of seconds")
            }
            guard let value else { return nil }
            guard value > 0, value <= ConfigurationLayer.maxSeconds else {
                throw failure(
                    key, "must be more than 0 and at most \(Int(ConfigurationLayer.maxSeconds)) seconds, got \(value)")
            }
            return .seconds(value)
        }

        func ids(_ key: ConfigurationKey) async throws(ConfigurationError) -> [UInt32]? {
            let values: [Int]?
            do {
                values = try await reader.fetchIntArray(forKey: ConfigKey(key.rawValue))
            } catch {
                throw await mismatch(key, expected: "a list of numeric IDs")
            }
            guard let values else { return nil }
            return try values.map { (value) throws(ConfigurationError) -> UInt32 in
                // (uid_t)-1 means "no ID" to the kernel, so it cannot be granted anything.
                guard value >= 0, value < Int(UInt32.max) else {
                    throw failure(key, "\(value) is not a valid user or group ID")
                }
                return UInt32(value)
            }
        }

        /// A connection URL, parsed now: a malformed one is a configuration error, an unreachable one is not.
        func endpoint(_ key: ConfigurationKey) async throws(ConfigurationError) -> ClusterEndpoint? {
            guard let text = try await string(key), !text.isEmpty else { return nil }
            do throws(ConfigurationError) {
                return try ClusterEndpoint(parsing: text)
            } catch {
                // The error repeats no part of the URL beyond its start, so no secret reaches a log.
                throw failure(key, String(error.message.dropFirst("cluster.postgres: ".count)))
            }
        }

        /// A host's name in the cluster, as other hosts' `origin.host` shows it.
        func hostName(_ key: ConfigurationKey) async throws(ConfigurationError) -> String? {
            guard let text = try await string(key) else { return nil }
            let allowed = text.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F }
            guard !text.isEmpty, text.utf8.count <= 255, allowed else {
                throw failure(key, "\(quoted(text)) is not a host name (1 to 255 printable characters, no spaces)")
            }
            return text
        }

        /// A lower-case SQL identifier, so that it can name the schema unquoted.
        func identifier(_ key: ConfigurationKey) async throws(ConfigurationError) -> String? {
            guard let text = try await string(key) else { return nil }
            let bytes = Array(text.utf8)
            let valid =
                !bytes.isEmpty && bytes.count <= 40
                && bytes.enumerated().allSatisfy { offset, byte in
                    (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || byte == UInt8(ascii: "_")
                        || (offset > 0 && (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte))
                }
            guard valid else {
                throw failure(
                    key, "\(quoted(text)) is not a schema name (lower-case letters, digits and _, at most 40)")
            }
            return text
        }

        func patterns(_ key: ConfigurationKey) async throws(ConfigurationError) -> [String]? {
            let values: [String]?
            do {
                values = try await reader.fetchStringArray(forKey: ConfigKey(key.rawValue))
            } catch {
                throw await mismatch(key, expected: "a list of scene patterns")
            }
            guard let values else { return nil }
            for pattern in values where pattern.isEmpty {
                throw failure(key, "an empty pattern matches no scene")
            }
            return values
        }

        func mode(_ key: ConfigurationKey) async throws(ConfigurationError) -> UInt32? {
            guard let text = try await string(key) else { return nil }
            let isOctal = text.utf8.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "7")).contains($0) }
            guard isOctal, (1...4).contains(text.utf8.count), let mode = UInt32(text, radix: 8), mode <= 0o777 else {
                throw failure(key, "\(quoted(text)) is not an octal mode from \"0000\" to \"0777\", like \"0660\"")
            }
            return mode
        }

        private func string(_ key: ConfigurationKey) async throws(ConfigurationError) -> String? {
            do {
                return try await reader.fetchString(forKey: ConfigKey(key.rawValue))
            } catch {
                throw await mismatch(key, expected: "a single value")
            }
        }

        private func failure(_ key: ConfigurationKey, _ problem: String) -> ConfigurationError {
            ConfigurationError(message: "\(source.describe(key)): \(problem)")
        }

        /// The error for a value of the wrong type, showing the value as written when it has a text form.
        private func mismatch(_ key: ConfigurationKey, expected: String) async -> ConfigurationError {
            let configKey = ConfigKey(key.rawValue)
            // Only probes what the value is, for the message: a failure just means "not that", and the mismatch
            // is reported either way.
            if let text = try? await reader.fetchString(forKey: configKey) {
                return failure(key, "expected \(expected), got \(quoted(text))")
            }
            if (try? await reader.fetchStringArray(forKey: configKey)) != nil {  // as above
                return failure(key, "expected \(expected), got a list")
            }
            return failure(key, "expected \(expected)")
        }

        private func quoted(_ text: String) -> String {
            var escaped = ""
            // Scalars, not characters: "\r\n" is one character and would escape as neither.
            for scalar in text.unicodeScalars {
                switch scalar {
                case "\\": escaped += "\\\\"
                case "\"": escaped += "\\\""
                case "\n": escaped += "\\n"
                case "\r": escaped += "\\r"
                case "\t": escaped += "\\t"
                default: escaped.unicodeScalars.append(scalar)
                }
            }
            return "\"" + escaped + "\""
        }
    }
}
