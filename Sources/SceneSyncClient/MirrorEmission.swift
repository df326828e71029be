/// What a ``ScenePath`` reports to its listeners.
enum MirrorEmission<Route: Sendable>: Sendable {
    /// Another writer changed the scene.
    case routes([Route])
    /// A change could not be taken in (an element that is not a `Route`), or a background write failed.
    case failure(SceneSyncClientError)
}
