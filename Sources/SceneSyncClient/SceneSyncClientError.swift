/// Why the app-facing API (``SceneSyncSession``, ``ScenePath``, ``SceneFile``) failed on the client's side.
///
/// The daemon's own refusals stay `SceneSyncError` (its protocol code, message and, for `conflict`, the current
/// scene). This covers what the client decides by itself: a deadline that passed, a route that does not decode, a
/// type whose name cannot be a tag. A struct with a ``Code`` rather than an enum, so that new cases can be added
/// without breaking an app's exhaustive `switch`.
public struct SceneSyncClientError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The kind of failure; compare with the static members (`error.code == .timedOut`).
    public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// The request's deadline passed: the daemon did not answer, or no daemon could be reached, in time.
        public static let timedOut = Code(rawValue: "timed_out")
        /// An element of the scene is not a `Route`: another tag, or a value of another shape.
        public static let undecodableElement = Code(rawValue: "undecodable_element")
        /// `Route` cannot be encoded, or its encoding is not one JSON value.
        public static let unencodableRoute = Code(rawValue: "unencodable_route")
        /// `Route`'s qualified name is not stable (a local or private type), so it cannot tag elements.
        public static let unstableTypeName = Code(rawValue: "unstable_type_name")
        /// `update` met a conflict on every attempt: other writers kept changing the scene.
        public static let tooManyConflicts = Code(rawValue: "too_many_conflicts")
        /// Not a valid scene ID (SPEC: `^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`, not ending in `.json`), or not a valid
        /// prefix for one.
        public static let invalidSceneID = Code(rawValue: "invalid_scene_id")
        /// Reading or writing a scene file failed.
        public static let fileSystem = Code(rawValue: "file_system")
        /// A value set through ``ScenePath/routes`` could not be written; the daemon's state shows again.
        public static let writeFailed = Code(rawValue: "write_failed")
        /// A value set through ``ScenePath/routes`` no longer applied: another writer changed the part of the path
        /// the binding kept, so the edit was dropped and the newer path shows instead.
        public static let writeDropped = Code(rawValue: "write_dropped")
        /// A connection already has ``SceneSyncConnection/maxPendingRequests`` requests waiting for answers.
        public static let tooManyRequests = Code(rawValue: "too_many_requests")
        /// The ``SceneSyncSession`` was closed.
        public static let closed = Code(rawValue: "closed")
    }

    /// What kind of failure this is.
    public var code: Code
    /// What happened, for people.
    public var message: String
    /// For ``Code/undecodableElement``: the element's position, root first.
    public var index: Int?

    public init(_ code: Code, _ message: String, index: Int? = nil) {
        self.code = code
        self.message = message
        self.index = index
    }

    public var description: String { "\(code): \(message)" }
}
