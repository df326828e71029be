import SceneSyncCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One scene's file, for apps that only write files and keep no connection to the daemon.
///
/// The daemon watches the scenes directory, so a file written here becomes a change like any other; reading it
/// back at launch restores what the daemon restored from its snapshot. Routes are encoded as ``ScenePath`` encodes
/// them (tagged with `String(reflecting: Route.self)`, items from `JSONEncoder` with sorted keys), so a file written
/// here, by a ``ScenePath`` or by SwiftUI's own `NavigationPath.CodableRepresentation` looks alike.
///
/// ```swift
/// let file = SceneFile(scene: "com.example.Recipes.window-1")
/// var routes = try file.read(as: Route.self)   // [] when there is no file yet
/// routes.append(.recipe(42))
/// try file.write(routes)
/// ```
public struct SceneFile: Sendable, Equatable {
    /// The scene ID: the file is `<directory>/<scene>.json`.
    public var scene: String
    /// The scenes directory.
    public var directory: String

    /// The environment variable that overrides the daemon's scenes directory (`scenes.dir`); honoured here too, so
    /// that an app and a daemon started from the same shell agree.
    public static let directoryEnvironmentVariable = "SCENESYNCD_SCENES_DIR"

    /// - Parameters:
    ///   - scene: A valid scene ID (`com.example.Recipes.window-1`); checked when the file is read or written.
    ///   - directory: The scenes directory; `nil` for the one the daemon uses by default for this user
    ///     (`$XDG_RUNTIME_DIR/scenesync/scenes`, `/run/scenesync/scenes` for root), or `SCENESYNCD_SCENES_DIR`.
    public init(scene: String, directory: String? = nil) {
        self.scene = scene
        self.directory = directory ?? Self.defaultDirectory()
    }

    /// The file's path.
    public var path: String { directory + "/" + scene + ".json" }

    /// The scenes directory the daemon uses by default for this process's user and environment.
    public static func defaultDirectory() -> String {
        var environment: [String: String] = [:]
        for name in [directoryEnvironmentVariable, "XDG_RUNTIME_DIR", "HOME", "RUNTIME_DIRECTORY"] {
            if let value = getenv(name) { environment[name] = String(cString: value) }
        }
        if let override = environment[directoryEnvironmentVariable], !override.isEmpty { return override }
        return PlatformDefaults.resolve(environment: environment, uid: geteuid()).scenesDirectory
    }

    /// The routes in the file, root first; `[]` when there is no file.
    ///
    /// - Throws: ``SceneSyncClientError`` with ``SceneSyncClientError/Code/undecodableElement`` for an element
    ///   that is not a `Route`, ``SceneSyncClientError/Code/fileSystem`` when the file cannot be read or is not a
    ///   scene file.
    public func read<Route: Codable & Sendable>(as type: Route.Type) throws(SceneSyncClientError) -> [Route] {
        let coding = try RouteCoding<Route>()
        guard let decoded = try readPath() else { return [] }
        return try coding.decode(decoded.path)
    }

    /// Replaces the file with `routes` (root first), atomically: a temp file whose name the daemon ignores (a
    /// dot-file ending in `.tmp`), flushed to disk, then renamed over the scene file. A file in the array format
    /// stays an array; any other becomes codable, as SwiftUI writes it.
    public func write<Route: Codable & Sendable>(_ routes: [Route]) throws(SceneSyncClientError) {
        let coding = try RouteCoding<Route>()
        let format: SceneFormat
        do {
            format = try readPath()?.format == .array ? .array : .codable
        } catch {
            // A damaged or unreadable file is replaced, as the app's own save would replace it.
            format = .codable
        }
        let bytes = SceneFileCodec.encode(try coding.encode(routes, as: format), as: format)
        try replace(with: bytes)
    }

    // MARK: - Files

    private func checkedPath() throws(SceneSyncClientError) -> String {
        guard SceneID.isValid(scene) else {
            throw SceneSyncClientError(.invalidSceneID, "\"\(scene)\" is not a valid scene ID")
        }
        return path
    }

    /// The file's path and format; `nil` when there is no file.
    private func readPath() throws(SceneSyncClientError) -> (path: [Element], format: SceneFormat?)? {
        let path = try checkedPath()
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        if descriptor < 0 {
            let code = errno
            if code == ENOENT { return nil }
            throw Self.failure("cannot open \(path)", code)
        }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw Self.failure("cannot read \(path)", errno)
            }
            if count == 0 { break }
            bytes.append(contentsOf: chunk[..<count])
        }
        let codec = SceneFileCodec(policy: .auto, maxFileBytes: .max, maxDepth: .max)
        do throws(SceneFileError) {
            let decoded = try codec.decode(bytes)
            return (decoded.path, decoded.format)
        } catch {
            throw SceneSyncClientError(.fileSystem, "\(path) is not a scene file: \(error)")
        }
    }

    private func replace(with bytes: [UInt8]) throws(SceneSyncClientError) {
        let target = try checkedPath()
        var random = SystemRandomNumberGenerator()
        let suffix = String(random.next() as UInt64, radix: 16)
        let temp = directory + "/." + scene + "." + suffix + ".tmp"
        let descriptor = open(temp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw Self.failure("cannot create \(temp)", errno) }
        var written = 0
        var failure: SceneSyncClientError?
        while written < bytes.count {
            let count = bytes[written...].withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                failure = Self.failure("cannot write \(temp)", errno)
                break
            }
            written += count
        }
        if failure == nil, fsync(descriptor) != 0 { failure = Self.failure("cannot flush \(temp)", errno) }
        if close(descriptor) != 0, failure == nil { failure = Self.failure("cannot close \(temp)", errno) }
        if failure == nil, rename(temp, target) != 0 { failure = Self.failure("cannot rename onto \(target)", errno) }
        if let failure {
            unlink(temp)
            throw failure
        }
    }

    private static func failure(_ what: String, _ code: Int32) -> SceneSyncClientError {
        SceneSyncClientError(.fileSystem, "\(what): \(String(cString: strerror(code)))")
    }
}
