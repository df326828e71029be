import SceneSyncCore

/// Which subscriptions an event for one scene goes to, found without testing every subscription's patterns.
///
/// Most subscriptions name their scenes (a window follows its own scene), so a change to one scene should cost its
/// own subscribers, not a glob match per subscription of the daemon: Redis keeps its channel subscribers in a hash
/// table and only walks the list of pattern subscriptions. Subscriptions are indexed the same way, by the scene each
/// literal pattern names, and the ones with a wildcard pattern are kept in a list tested against every scene.
///
/// A value with no I/O. Every list is kept in ascending subscription ID order, so the recipients of an event come
/// out each once, in that order, merged from both.
struct SubscriptionIndex {
    /// Subscriptions by the scene their literal patterns name.
    private var literal: [SceneID: [UInt64]] = [:]
    /// Subscriptions with at least one wildcard pattern, and those patterns.
    private var wildcards: [(id: UInt64, patterns: [ScenePattern])] = []

    /// Indexes a new subscription; its ID must not be indexed already.
    mutating func insert(_ id: UInt64, patterns: [ScenePattern]) {
        for scene in Self.literalScenes(patterns) {
            Self.insertSorted(id, into: &literal[scene, default: []])
        }
        let globs = patterns.filter { !$0.isLiteral }
        guard !globs.isEmpty else { return }
        let position = wildcards.firstIndex { $0.id > id } ?? wildcards.endIndex
        wildcards.insert((id, globs), at: position)
    }

    /// Forgets a subscription indexed with `patterns`.
    mutating func remove(_ id: UInt64, patterns: [ScenePattern]) {
        for scene in Self.literalScenes(patterns) {
            literal[scene]?.removeAll { $0 == id }
            if literal[scene]?.isEmpty == true { literal[scene] = nil }
        }
        wildcards.removeAll { $0.id == id }
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

    /// Whether nothing is indexed.
    var isEmpty: Bool { literal.isEmpty && wildcards.isEmpty }

    /// The scenes a subscription's literal patterns name, each once. A literal that is no valid scene ID names none.
    private static func literalScenes(_ patterns: [ScenePattern]) -> Set<SceneID> {
        Set(patterns.lazy.filter(\.isLiteral).compactMap { SceneID($0.text) })
    }

    private static func insertSorted(_ id: UInt64, into list: inout [UInt64]) {
        let position = list.firstIndex { $0 >= id } ?? list.endIndex
        if position < list.endIndex, list[position] == id { return }
        list.insert(id, at: position)
    }
}
