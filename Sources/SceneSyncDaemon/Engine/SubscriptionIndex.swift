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
///
/// Each entry carries its `Payload` (the engine's: the subscription's outbox), so that handing an event to its
/// recipients looks up no table per recipient.
struct SubscriptionIndex<Payload> {
    /// A subscription and its payload.
    struct Entry {
        let id: UInt64
        let payload: Payload
    }

    /// A subscription with at least one wildcard pattern, and those patterns: tested against every scene.
    struct Wildcard {
        let entry: Entry
        let patterns: [ScenePattern]
        /// One of the patterns is `*`: no pattern is tested for it per event.
        let matchesEverything: Bool

        var id: UInt64 { entry.id }
    }

    /// Every indexed subscription: the recipients of the events that go to all (`heartbeat`, `snapshot`).
    private var all: [Entry] = []
    /// Subscriptions by the scene their literal patterns name.
    private var literal: [SceneID: [Entry]] = [:]
    private var wildcards: [Wildcard] = []

    /// Indexes a new subscription; its ID must not be indexed already (the registry never hands one out twice).
    mutating func insert(_ id: UInt64, patterns: [ScenePattern], payload: Payload) {
        let entry = Entry(id: id, payload: payload)
        let isNew = Self.insertAscending(entry, into: &all)
        precondition(isNew, "subscription \(id) is indexed already")
        for scene in Self.literalScenes(patterns) {
            Self.insertAscending(entry, into: &literal[scene, default: []])
        }
        let globs = patterns.filter { !$0.isLiteral }
        guard !globs.isEmpty else { return }
        let position = wildcards.ascendingPosition(of: id) { $0.id }
        wildcards.insert(
            Wildcard(entry: entry, patterns: globs, matchesEverything: globs.contains(.all)), at: position)
    }

    /// Forgets a subscription indexed with `patterns`. Costs the lists it is on: a subscription that names its scenes
    /// leaves the wildcard list alone.
    mutating func remove(_ id: UInt64, patterns: [ScenePattern]) {
        Self.removeAscending(id, from: &all)
        for scene in Self.literalScenes(patterns) {
            guard var named = literal.removeValue(forKey: scene) else { continue }
            Self.removeAscending(id, from: &named)
            if !named.isEmpty { literal[scene] = named }
        }
        guard patterns.contains(where: { !$0.isLiteral }) else { return }
        let position = wildcards.ascendingPosition(of: id) { $0.id }
        if position < wildcards.endIndex, wildcards[position].id == id { wildcards.remove(at: position) }
    }

    /// Calls `body` with every subscription whose patterns match `scene`, each once, in ascending ID order.
    ///
    /// The lists are read through their buffers, each entry lent to `body` where it lies: a copy of each entry (of
    /// its outbox, and of a wildcard's patterns) was a reference count up and down per recipient.
    func forEachMatch(of scene: SceneID, _ body: (Entry) -> Void) {
        let named = literal[scene] ?? []
        named.withUnsafeBufferPointer { named in
            wildcards.withUnsafeBufferPointer { wildcards in
                var next = 0
                for index in wildcards.indices {
                    guard
                        wildcards[index].matchesEverything
                            || wildcards[index].patterns.contains(where: { $0.matches(scene) })
                    else { continue }
                    let id = wildcards[index].id
                    while next < named.count, named[next].id < id {
                        body(named[next])
                        next += 1
                    }
                    // Named by a literal pattern too: once.
                    if next < named.count, named[next].id == id { next += 1 }
                    body(wildcards[index].entry)
                }
                while next < named.count {
                    body(named[next])
                    next += 1
                }
            }
        }
    }

    /// Calls `body` with every indexed subscription, in ascending ID order, whatever its patterns.
    func forEachSubscription(_ body: (Entry) -> Void) {
        all.withUnsafeBufferPointer { all in
            for index in all.indices { body(all[index]) }
        }
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

extension SubscriptionIndex {
    /// Inserts `entry` in its place in `list`; `false` when its ID is there already.
    @discardableResult
    fileprivate static func insertAscending(_ entry: Entry, into list: inout [Entry]) -> Bool {
        let position = list.ascendingPosition(of: entry.id) { $0.id }
        if position < list.endIndex, list[position].id == entry.id { return false }
        list.insert(entry, at: position)
        return true
    }

    /// Removes the entry of `id` from `list`, if it is there.
    fileprivate static func removeAscending(_ id: UInt64, from list: inout [Entry]) {
        let position = list.ascendingPosition(of: id) { $0.id }
        if position < list.endIndex, list[position].id == id { list.remove(at: position) }
    }
}
