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
/// here, by a ``ScenePath`` or by SwiftUI's own `NavigationPath.CodableRepresentation` looks alike. Given no
/// directory, it uses the one a daemon started by the same user in the same environment watches
/// (``defaultDirectory()``), found by the daemon's own rule.
///
/// ```swift
/// let file = SceneFile(scene: "com.example.Recipes.window-1")
/// var routes = try file.read(as: Route.self)   // [] when there is no file yet
/// routes.append(.recipe(id: 42))
/// try file.write(routes)
/// ```
public struct SceneFile: Sendable, Equatable {
    /// The scene ID: the file is `<directory>/<scene>.json`.
    public var scene: String
    /// The scenes directory. Empty when `init` was given none and the daemon's cannot be told (see
    /// ``defaultDirectory()``); ``read(as:)`` and ``write(_:)`` then throw why, until a directory is set here.
    public var directory: String {
        didSet { unknownDirectory = nil }
    }
    /// Why `directory` is unknown, when `init` was given none and could not find the daemon's.
    private var unknownDirectory: SceneSyncClientError?

    /// - Parameters:
    ///   - scene: A valid scene ID (`com.example.Recipes.window-1`); checked when the file is read or written.
    ///   - directory: The scenes directory; `nil` for the one a daemon started by this user in this environment
    ///     uses (``defaultDirectory()``): `SCENESYNCD_SCENES_DIRECTORY`, else `scenes.directory` in the daemon's
    ///     configuration file, else `$XDG_RUNTIME_DIR/scenesync/scenes` (`/run/scenesync/scenes` for root).
    public init(scene: String, directory: String? = nil) {
        if let directory {
            self.init(scene: scene) { () throws(SceneSyncClientError) -> String in directory }
        } else {
            self.init(scene: scene, directoryFrom: Self.defaultDirectory)
        }
    }

    /// A file in the directory `find` returns, or in none, with `find`'s error kept for read and write: an `init`
    /// that throws would burden every app for a rare misconfiguration.
    init(scene: String, directoryFrom find: () throws(SceneSyncClientError) -> String) {
        self.scene = scene
        do {
            directory = try find()
        } catch {
            directory = ""
            unknownDirectory = error
        }
    }

    /// The file's path.
    public var path: String { directory + "/" + scene + ".json" }

    /// The routes in the file, root first; `[]` when there is no file.
    ///
    /// - Throws: ``SceneSyncClientError`` with ``SceneSyncClientError/Code/undecodableElement`` for an element
    ///   that is not a `Route`, ``SceneSyncClientError/Code/fileSystem`` when the file cannot be read or is not a
    ///   scene file, ``SceneSyncClientError/Code/unknownScenesDirectory`` when the directory is unknown (see
    ///   ``directory``).
    public func read<Route: Decodable>(as type: Route.Type) throws(SceneSyncClientError) -> [Route] {
        let coding = try RouteCoding<Route>()
        guard let decoded = try readPath() else { return [] }
        return try coding.decode(decoded.path)
    }

    /// Replaces the file with `routes` (root first), atomically: a temp file whose name the daemon ignores (a
    /// dot-file ending in `.tmp`), flushed to disk, then renamed over the scene file. A file in the array format
    /// stays an array; any other becomes codable, as SwiftUI writes it.
    ///
    /// - Throws: ``SceneSyncClientError`` with ``SceneSyncClientError/Code/fileSystem`` when the file cannot be
    ///   written, ``SceneSyncClientError/Code/unknownScenesDirectory`` when the directory is unknown (see
    ///   ``directory``).
    public func write<Route: Encodable>(_ routes: [Route]) throws(SceneSyncClientError) {
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
        if let unknownDirectory { throw unknownDirectory }
        guard SceneID.isValid(scene) else {
            throw SceneSyncClientError(.invalidSceneID, "\"\(scene)\" is not a valid scene ID")
        }
        return path
    }

    /// The file's path and format; `nil` when there is no file.
    private func readPath() throws(SceneSyncClientError) -> (path: [Element], format: SceneFormat?)? {
        let path = try checkedPath()
        let bytes: [UInt8]
        do throws(WholeFile.Failure) {
            bytes = try WholeFile.read(path)
        } catch {
            if error.call == "open", error.code == ENOENT { return nil }
            throw SceneSyncClientError(.fileSystem, "cannot \(error.call) \(path): \(error.reason)")
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
