/// Why talking to the daemon failed before (or without) it answering.
///
/// Kept apart from `SceneSyncError` (the daemon's own answer: a protocol error code, a message and, for `conflict`,
/// the current scene) because callers react differently: a daemon error is final for that request, while these mean
/// the daemon is absent or went away and a later attempt may succeed. `scenesync` exits with status 3 for them.
public enum SceneSyncConnectionError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Nothing accepts connections at the socket path: no file, a stale file, or not a socket. The daemon is not
    /// running (or listens elsewhere; see ``SceneSyncSocket``).
    case noDaemon(path: String, reason: String)
    /// The socket exists but could not be connected to for another reason (permissions, a path too long for a Unix
    /// socket).
    case connectFailed(path: String, reason: String)
    /// The connection ended before the answer arrived: the daemon stopped, restarted or closed the connection.
    case disconnected(reason: String)
    /// The peer sent something that is not the protocol. The connection is closed, since nothing after it can
    /// be trusted to match up.
    case protocolViolation(String)

    /// A short code for scripts (`scenesync --json` prints it): `no_daemon`, `connect_failed`, `disconnected`,
    /// `protocol_violation`.
    public var code: String {
        switch self {
        case .noDaemon: "no_daemon"
        case .connectFailed: "connect_failed"
        case .disconnected: "disconnected"
        case .protocolViolation: "protocol_violation"
        }
    }

    /// What happened, for error messages (`scenesync` prints it after `scenesync: `).
    public var description: String {
        switch self {
        case .noDaemon(let path, let reason): "no daemon at \(path) (\(reason))"
        case .connectFailed(let path, let reason): "cannot connect to \(path): \(reason)"
        case .disconnected(let reason): "disconnected: \(reason)"
        case .protocolViolation(let what): "protocol violation: \(what)"
        }
    }
}
