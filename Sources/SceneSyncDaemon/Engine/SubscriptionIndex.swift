import SceneSyncCore

/// Which subscriptions an event for one scene goes to, found without testing every subscription's patterns.
///
/// Most subscriptions name their scenes (a window follows its own scene), so a change to one scene should cost its
/// own subscribers, not a glob match per subscription of the daemon: Redis keeps its channel subscribers in a hash
/// table and only walks the list of pattern subscriptions. Subscriptions are indexed the same way, by the scene each
/// literal pattern names, and the ones with a wildcard pattern are kept in a list tested against every scene.
///
/// A value with no I/O. Every list is kept in ascending subscription ID order, so the recipients of an event come
/// out each once, in that order, merged from both: the events a connection's subscriptions get are queued in an
/// order that does not depend on hashing, and so is the same on every run.
struct SubscriptionIndex {
    /// A subscription with at least one wildcard pattern, and those patterns: tested against every scene.
    struct Wildcard {
        let id: UInt64
        let patterns: [ScenePattern]
    }

    /// Every indexed subscription: the recipients of the events that go to all (`heartbeat`, `snapshot`).
    private var all: [UInt64] = []
    /// Subscriptions by the scene their literal patterns name.
    private var literal: [SceneID: [UInt64]] = [:]
    private var wildcards: [Wildcard] = []

    /// Indexes a new subscription; its ID must not be indexed already (the registry never hands one out twice).
    mutating func insert(_ id: UInt64, patterns: [ScenePattern]) {
        let isNew = all.insertAscending(id)
        precondition(isNew, "subscription \(id) is indexed already")
        for scene in Self.literalScenes(patterns) {
            literal[scene, default: []].insertAscending(id)
        }
        let globs = patterns.filter { !$0.isLiteral }
        guard !globs.isEmpty else { return }
        let position = wildcards.ascendingPosition(of: id) { $0.id }
        wildcards.insert(Wildcard(id: id, patterns: globs), at: position)
    }

    /// Forgets a subscription indexed with `patterns`. Costs the lists it is on: a subscription that names its scenes
    /// leaves the wildcard list alone.
    mutating func remove(_ id: UInt64, patterns: [ScenePattern]) {
        all.removeAscending(id)
        for scene in Self.literalScenes(patterns) {
            literal[scene]?.removeAscending(id)
            if literal[scene]?.isEmpty == true { literal[scene] = nil }
        }
        guard patterns.contains(where: { !$0.isLiteral }) else { return }
        let position = wildcards.ascendingPosition(of: id) { $0.id }
        if position < wildcards.endIndex, wildcards[position].id == id { wildcards.remove(at: position) }
    }

    /// Calls `body` with every subscription whose patterns match `scene`, each once, in ascending ID order.
    func forEachMatch(of scene: SceneID, _ body: (UInt64) -> Void) {
        let named = literal[scene] ?? []
        var next = named.startIndex
        for wildcard in wildcards where wildcard.patterns.contains(where: { $0.matches(scene) }) {
            while next < named.endIndex, named[next] < wildcard.id {
                body(named[next])
                next += 1
            }
            // Named by a literal pattern too: once.
            if next < named.endIndex, named[next] == wildcard.id { next += 1 }
            body(wildcard.id)
        }
        while next < named.endIndex {
            body(named[next])
            next += 1
        }
    }

    /// Calls `body` with every indexed subscription, in ascending ID order, whatever its patterns.
    func forEachSubscription(_ body: (UInt64) -> Void) {
        for id in all { body(id) }
    }

    /// How many subscriptions are indexed.
    var count: Int { all.count }

    /// Whether nothing is indexed, on any list: what removing every subscription must leave.
    var isEmpty: Bool { all.isEmpty && literal.isEmpty && wildcards.isEmpty }

    /// The scenes a subscription's literal patterns name, each once. A literal that is no valid scene ID names none.
    private static func literalScenes(_ patterns: [ScenePattern]) -> Set<SceneID> {
        Set(patterns.lazy.filter(\.isLiteral).compactMap { SceneID($0.text) })
    }
}

/// The index's lists are sorted by subscription ID. IDs are handed out ascending, so an insertion is nearly always
/// an append; a removal finds its place by binary search instead of walking the list.
extension Array {
    /// Where an element with `id` is, or would go, in a list sorted by `key`.
    fileprivate func ascendingPosition(of id: UInt64, by key: (Element) -> UInt64) -> Int {
        if let last, key(last) < id { return endIndex }
        var low = startIndex
        var high = endIndex
        while low < high {
            let middle = low + (high - low) / 2
            if key(self[middle]) < id { low = middle + 1 } else { high = middle }
        }
        return low
    }
}

extension Array where Element == UInt64 {
    /// Inserts `id` in its place; `false` when it is there already.
    @discardableResult
    fileprivate mutating func insertAscending(_ id: UInt64) -> Bool {
        let position = ascendingPosition(of: id) { $0 }
        if position < endIndex, self[position] == id { return false }
        insert(id, at: position)
        return true
    }

    /// Removes `id`, if it is there.
    fileprivate mutating func removeAscending(_ id: UInt64) {
        let position = ascendingPosition(of: id) { $0 }
        if position < endIndex, self[position] == id { remove(at: position) }
    }
}
