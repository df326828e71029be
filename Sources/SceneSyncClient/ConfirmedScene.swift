import SceneSyncCore

/// A scene as the daemon last confirmed it to a ``ScenePath``: what the next compare-and-set builds on.
struct ConfirmedScene<Route: Sendable>: Sendable {
    var elements: [Element] = []
    var routes: [Route] = []
    /// `0` while the scene does not exist: `if_version: 0` then means "only if it still does not exist".
    var version: UInt64 = 0
    var format: SceneFormat?
    /// The clock of the change that made it; `nil` before anything was seen.
    var clock: Clock?
    var exists = false
    /// The path holds an element that is not a `Route`: ``routes`` is the last good value, and writing over it
    /// would drop another component's element, so writes are refused until the scene is a `Route` path again.
    var undecodable: SceneSyncClientError?

    /// Whether a change at `clock` is already reflected here (this mirror's own write, or older).
    func covers(_ clock: Clock) -> Bool {
        guard let own = self.clock, own.epoch == clock.epoch else { return false }
        return clock.revision <= own.revision
    }

    /// The format a write uses: the scene's own, or codable for a new scene, as SwiftUI writes it.
    var writeFormat: SceneFormat { exists && format == .array ? .array : .codable }
}
