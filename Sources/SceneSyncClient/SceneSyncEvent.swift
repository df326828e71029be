public import SceneSyncCore

/// Something a subscription delivers: an event the daemon pushed, or, on a ``ResilientSubscription`` only, news
/// about the connection itself.
///
/// Events of one subscription arrive ordered by revision, without duplicates and without gaps, until a
/// ``resync(_:)``; see ``ResilientSubscription`` for the whole contract across reconnections.
public enum SceneSyncEvent: Sendable, Equatable {
    /// A scene changed (`kind` `set`) or was deleted (`kind` `delete`). `record.clock` is the change's revision.
    case change(ChangeRecord)
    /// A scene as it is now: the initial state after subscribing, or the catch-up after a ``resync(_:)``.
    case state(SceneState)
    /// Everything up to this clock has been delivered; live changes follow. After a resync, scenes that got no
    /// ``state(_:)`` event since the resync no longer exist.
    case synced(Clock)
    /// The subscription could not continue gap-free; throw away what you know about the matching scenes. The
    /// current ``state(_:)`` of every matching scene follows, then ``synced(_:)``.
    case resync(ResyncReason)
    /// An app reported a scene's lifecycle phase.
    case phase(scene: SceneID, phase: ScenePhase)
    /// The daemon wrote a snapshot.
    case snapshot(Snapshot)
    /// Something went wrong that no request caused: a rejected scene file, a failed snapshot or write-back.
    case warning(Warning)
    /// The daemon is alive (every `socket.heartbeat_s`); carries its clock.
    case heartbeat(Clock)
    /// The daemon is shutting down; the connection closes next.
    case shutdown
    /// ``ResilientSubscription`` only: the connection was lost; it is reconnecting.
    case disconnected(reason: String)
    /// ``ResilientSubscription`` only: connected and subscribed again. `resumedAt` is the clock it resumed after;
    /// `nil` means it could not resume, and a ``resync(_:)`` follows.
    case reconnected(resumedAt: Clock?)
    /// An event this library does not know (from a newer daemon), passed on rather than dropped.
    case unknown(name: String, JSONValue)

    /// Why a subscription had to start over.
    public enum ResyncReason: Sendable, Equatable, CustomStringConvertible {
        /// The daemon cannot prove continuity with the clock given (it restarted without a clean shutdown, or its
        /// state was lost): revisions of the old epoch mean nothing now.
        case epoch
        /// The changes after the clock given are no longer in the daemon's history.
        case compacted
        /// This subscriber read too slowly; the daemon dropped its queued events.
        case lagged
        /// Client side: the connection was lost before the subscription had delivered a complete view (before its
        /// first ``SceneSyncEvent/synced(_:)``, or between a resync and its `synced`), so it starts over.
        case interrupted
        /// A reason this library does not know.
        case other(String)

        /// The reason for a protocol spelling; unknown spellings are kept as ``other(_:)``.
        public init(rawValue: String) {
            switch rawValue {
            case "epoch": self = .epoch
            case "compacted": self = .compacted
            case "lagged": self = .lagged
            case "interrupted": self = .interrupted
            default: self = .other(rawValue)
            }
        }

        /// The reason as the protocol spells it.
        public var rawValue: String {
            switch self {
            case .epoch: "epoch"
            case .compacted: "compacted"
            case .lagged: "lagged"
            case .interrupted: "interrupted"
            case .other(let text): text
            }
        }

        /// The protocol spelling.
        public var description: String { rawValue }
    }

    /// The `snapshot` event.
    public struct Snapshot: Sendable, Equatable {
        /// The snapshot file, absolute.
        public var path: String
        /// The revision it captured.
        public var revision: UInt64
        /// `signal`, `phase`, `request` or `shutdown`.
        public var reason: String

        /// An event with these values, for tests.
        public init(path: String, revision: UInt64, reason: String) {
            self.path = path
            self.revision = revision
            self.reason = reason
        }
    }

    /// The `warning` event.
    public struct Warning: Sendable, Equatable {
        /// The code as sent; see ``knownCode`` for the codes the protocol defines.
        public var code: String
        /// What happened, for people.
        public var message: String
        /// The scene it is about, if any.
        public var scene: String?
        /// The file it is about, if any.
        public var file: String?

        /// A warning with these values, for tests.
        public init(code: String, message: String, scene: String? = nil, file: String? = nil) {
            self.code = code
            self.message = message
            self.scene = scene
            self.file = file
        }

        /// The code, when it is one the protocol defines.
        public var knownCode: WarningCode? { WarningCode(rawValue: code) }
    }
}
