import SceneSyncCore

/// What a UI binding did to a path: the elements it popped from the top and the ones it pushed, on top of the part
/// it kept. A binding assigns whole arrays (`NavigationStack(path:)` appends, removes the last, or resets), but
/// writing the whole array would overwrite whatever another window changed meanwhile; writing the edit keeps it.
///
/// Elements are compared as the daemon compares them (tags equal, values equal as JSON), so a route that encodes
/// with another key order is still the same route.
struct PathEdit<Route: Sendable>: Sendable {
    /// The part of the base the binding kept, root first.
    var kept: [Element]
    /// What the binding popped from the top of the base, root first.
    var popped: [Element]
    /// What it pushed on top of ``kept``, root first, with the routes they encode.
    var pushed: [Element]
    var pushedRoutes: [Route]

    /// The edit that turns `base` into `target`: the longest common root-first prefix is kept.
    init(from base: [Element], to target: [Element], routes targetRoutes: [Route]) {
        var common = 0
        while common < base.count, common < target.count, base[common] == target[common] { common += 1 }
        kept = Array(base[..<common])
        popped = Array(base[common...])
        pushed = Array(target[common...])
        pushedRoutes = Array(targetRoutes[common...])
    }

    /// Whether the edit changes nothing.
    var isEmpty: Bool { popped.isEmpty && pushed.isEmpty }

    /// The edit applied on top of `path` (another writer's newer path, with its routes), or `nil` when it no longer
    /// applies there:
    /// - the kept part must still be the bottom of `path`; otherwise what the binding built on is gone;
    /// - a pure push goes on top of whatever is there now, so another writer's pushes stay below it;
    /// - a pop applies when what is above the kept part is what the binding popped, or part of it (the other writer
    ///   popped too); it does not when the other writer pushed above it, since popping would remove that push.
    func apply(to path: [Element], routes: [Route]) -> (elements: [Element], routes: [Route])? {
        guard path.count >= kept.count, path[..<kept.count].elementsEqual(kept) else { return nil }
        if popped.isEmpty { return (path + pushed, Array(routes.prefix(path.count)) + pushedRoutes) }
        let above = path[kept.count...]
        guard above.count <= popped.count, above.elementsEqual(popped[..<above.count]) else { return nil }
        return (Array(path[..<kept.count]) + pushed, Array(routes.prefix(kept.count)) + pushedRoutes)
    }
}
