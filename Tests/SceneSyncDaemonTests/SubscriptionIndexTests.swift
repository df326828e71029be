import SceneSyncCore
import SceneSyncTestKit
import Testing

@testable import SceneSyncDaemon

/// The index finds exactly the subscriptions whose patterns match, each once and in ID order: what testing every
/// subscription's patterns would find.
@Suite struct SubscriptionIndexTests {
    static let scenes = ["a", "b", "ab", "main", "main-2", "x.1", "settings"].compactMap { SceneID($0) }
    static let patterns = [
        "a", "b", "ab", "main", "main-2", "settings", "nope", "no/scene", "*", "a*", "main*", "?", "??", "[ab]",
        "[!a]*", "*-2", "x.?", "[", "s*s",
    ].map(ScenePattern.init)

    static func matches(_ index: SubscriptionIndex, _ scene: SceneID) -> [UInt64] {
        var found: [UInt64] = []
        index.forEachMatch(of: scene) { found.append($0) }
        return found
    }

    @Test func seededSchedulesFindWhatEveryPatternTestFinds() {
        for seed in UInt64(1)...300 {
            var rng = SplitMix64(seed: seed)
            var index = SubscriptionIndex()
            var live: [UInt64: [ScenePattern]] = [:]
            var nextID: UInt64 = 1
            for step in 0..<60 {
                if live.isEmpty || rng.chance(60) {
                    let patterns = (0..<(1 + rng.below(3))).map { _ in rng.pick(Self.patterns) }
                    // IDs mostly ascend, as the registry hands them out, but the index must not depend on it.
                    let id = rng.chance(80) ? nextID : UInt64(1000 + rng.below(1000))
                    nextID += 1
                    guard live[id] == nil else { continue }
                    index.insert(id, patterns: patterns)
                    live[id] = patterns
                } else {
                    let id = rng.pick(live.keys.sorted())
                    index.remove(id, patterns: live[id] ?? [])
                    live[id] = nil
                }
                for scene in Self.scenes {
                    let expected = live.keys.sorted().filter { id in
                        (live[id] ?? []).contains { $0.matches(scene) }
                    }
                    let found = Self.matches(index, scene)
                    #expect(found == expected, "seed \(seed), step \(step), scene \(scene)")
                    if found != expected { return }
                }
            }
            for (id, patterns) in live { index.remove(id, patterns: patterns) }
            #expect(index.isEmpty, "seed \(seed): removing every subscription leaves the index empty")
        }
    }

    @Test func aSubscriptionNamingASceneTwiceAndByWildcardGetsEachEventOnce() throws {
        let main = try #require(SceneID("main"))
        var index = SubscriptionIndex()
        index.insert(3, patterns: [ScenePattern("main"), ScenePattern("main"), ScenePattern("m*")])
        index.insert(1, patterns: [ScenePattern("*")])
        index.insert(2, patterns: [ScenePattern("main")])
        #expect(Self.matches(index, main) == [1, 2, 3])
        index.remove(3, patterns: [ScenePattern("main"), ScenePattern("main"), ScenePattern("m*")])
        #expect(Self.matches(index, main) == [1, 2])
    }

    @Test func theRegistryKeepsItsIndexInStep() throws {
        let main = try #require(SceneID("main"))
        let other = try #require(SceneID("other"))
        var registry = SubscriptionRegistry()
        let outbox = Outbox(limit: 8, counters: DeliveryCounters())
        let first = registry.register(outbox: outbox, credentials: nil, close: {})
        let second = registry.register(outbox: outbox, credentials: nil, close: {})
        let namedOrNil = registry.subscribe(connection: first, patterns: [ScenePattern("main")])
        let everythingOrNil = registry.subscribe(connection: second, patterns: [.all])
        let named = try #require(namedOrNil)
        let everything = try #require(everythingOrNil)
        func recipients(_ scene: SceneID?) -> [UInt64] {
            var ids: [UInt64] = []
            registry.forEachRecipient(of: scene) { ids.append($0.id) }
            return ids.sorted()
        }
        #expect(recipients(main) == [named.id, everything.id])
        #expect(recipients(other) == [everything.id])
        #expect(recipients(nil) == [named.id, everything.id])
        // Another connection cannot end it.
        #expect(registry.unsubscribe(connection: second, subscription: named.id) == nil)
        #expect(recipients(main) == [named.id, everything.id])
        #expect(registry.unsubscribe(connection: first, subscription: named.id) != nil)
        #expect(recipients(main) == [everything.id])
        registry.unregister(connection: second)
        #expect(recipients(main).isEmpty)
        #expect(recipients(nil).isEmpty)
    }
}
