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
    /// The elements the mirror's ``UndecodableRoutes`` policy left out of ``routes``.
    var skipped: [SkippedRoute] = []

    /// Whether a change at `clock` is already reflected here (this mirror's own write, or older).
    func covers(_ clock: Clock) -> Bool {
        guard let own = self.clock, own.epoch == clock.epoch else { return false }
        return clock.revision <= own.revision
    }

    /// The elements ``routes`` shows, root first: the whole path, or the part the policy kept (its bottom). What a
    /// write compares with and builds on; the skipped elements above it go once the app changes the path.
    var view: [Element] { Array(elements.prefix(routes.count)) }

    /// Takes in a decoded path; `false` (and the routes kept as they were) when it failed under
    /// ``UndecodableRoutes/fail``.
    mutating func take(_ decoded: DecodedRoutes<Route>) -> Bool {
        if let failure = decoded.failure {
            undecodable = failure
            return false
        }
        routes = decoded.routes
        skipped = decoded.skipped
        undecodable = nil
        return true
    }

    /// The scene after this mirror wrote `elements` over it: what the answer confirmed.
    func written(_ elements: [Element], _ routes: [Route], version: UInt64, revision: UInt64) -> ConfirmedScene {
        var written = self
        written.elements = elements
        written.routes = routes
        written.version = version
        written.format = writeFormat
        written.exists = true
        written.undecodable = nil
        written.skipped = []
        written.clock = clock.map { Clock(epoch: $0.epoch, revision: revision) }
        return written
    }

    /// The format a write uses: the scene's own, or codable for a new scene, as SwiftUI writes it.
    var writeFormat: SceneFormat { exists && format == .array ? .array : .codable }
}
