/// The protocol's error codes (§6). Every error the daemon reports maps onto exactly one.
public enum ErrorCode: String, Sendable, Equatable, CaseIterable {
    case badRequest = "bad_request"
    case unknownOp = "unknown_op"
    case invalidScene = "invalid_scene"
    case notFound = "not_found"
    case conflict
    case outOfRange = "out_of_range"
    case tooLarge = "too_large"
    case forbidden
    case invalidConfig = "invalid_config"
    case unavailable
    case `internal`
}

/// The codes of `warning` events.
public enum WarningCode: String, Sendable, Equatable, CaseIterable {
    case invalidFile = "invalid_file"
    case fileTooLarge = "file_too_large"
    case rescanned
    case snapshotFailed = "snapshot_failed"
    case writeFailed = "write_failed"
    /// The cluster database cannot be reached (§9): this host works alone until `clusterRestored`.
    case clusterUnavailable = "cluster_unavailable"
    case clusterRestored = "cluster_restored"
}

/// An error as a client sees it: a code, a human message and, for `conflict`, the scene as it is now.
public struct SceneSyncError: Error, Sendable, Equatable, CustomStringConvertible {
    public var code: ErrorCode
    public var message: String
    /// For `conflict`: the current scene, `nil` when it does not exist.
    public var current: SceneState?

    public init(_ code: ErrorCode, _ message: String, current: SceneState? = nil) {
        self.code = code
        self.message = message
        self.current = current
    }

    public var description: String { "\(code.rawValue): \(message)" }

    public static func badRequest(_ message: String) -> SceneSyncError { SceneSyncError(.badRequest, message) }
}
