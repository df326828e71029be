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
    /// applies there. The binding's values are edits of what the user saw, and other writers may have pushed in
    /// between the routes the user pushed, so the kept part is looked for as a subsequence of `path`, in order:
    /// - the kept part must still be in `path`; otherwise what the binding built on is gone;
    /// - a pure push goes on top of whatever is there now, so another writer's pushes stay below it;
    /// - a pop applies when what is above the kept part is what the binding popped, or part of it (the other writer
    ///   popped too); it does not when anything else is above it, since popping would remove another writer's push.
    func apply(to path: [Element], routes: [Route]) -> (elements: [Element], routes: [Route])? {
        if popped.isEmpty {
            guard Self.isSubsequence(kept[...], of: path[...]) else { return nil }
            return (path + pushed, Array(routes.prefix(path.count)) + pushedRoutes)
        }
        // The most of what was popped that is still on top, first.
        for stillThere in stride(from: min(popped.count, path.count), through: 0, by: -1) {
            let top = path.count - stillThere
            guard path[top...].elementsEqual(popped[..<stillThere]), Self.ends(path[..<top], with: kept) else {
                continue
            }
            return (Array(path[..<top]) + pushed, Array(routes.prefix(top)) + pushedRoutes)
        }
        return nil
    }

    /// Whether `below` holds `kept` in order with its last element on top: nothing but `kept` and other writers'
    /// elements pushed in between is below the popped part.
    private static func ends(_ below: ArraySlice<Element>, with kept: [Element]) -> Bool {
        guard let last = kept.last else { return below.isEmpty }
        return below.last == last && isSubsequence(kept.dropLast(), of: below.dropLast())
    }

    private static func isSubsequence(_ part: ArraySlice<Element>, of whole: ArraySlice<Element>) -> Bool {
        var remaining = part[...]
        for element in whole where remaining.first == element {
            remaining = remaining.dropFirst()
            if remaining.isEmpty { break }
        }
        return remaining.isEmpty
    }
}
