import SceneSyncCore
import SceneSyncTestKit
import Testing

@testable import SceneSyncDaemon

/// The index finds exactly the subscriptions whose patterns match, each once and in ID order: what testing every
/// subscription's patterns would find.
@Suite struct SubscriptionIndexTests {
    static func matches(_ index: SubscriptionIndex<Void>, _ scene: SceneID) -> [UInt64] {
        var found: [UInt64] = []
        index.forEachMatch(of: scene) { found.append($0.id) }
        return found
    }

    static func everyone(_ index: SubscriptionIndex<Void>) -> [UInt64] {
        var found: [UInt64] = []
        index.forEachSubscription { found.append($0.id) }
        return found
    }

    /// Every scene ID of one to three characters over `a`, `b`, `-`, against one subscription per pattern and one
    /// per pair of patterns of up to two tokens: literal and wildcard patterns of one subscription that meet on a
    /// scene, repeats, brackets and literals that name no scene, all in every combination.
    @Test func everySmallPatternPairFindsWhatEveryPatternTestFinds() {
        let tokens = ["a", "b", "-", "*", "?", "[ab]", "[!a]", "["]
        let patterns = [""] + tokens + tokens.flatMap { first in tokens.map { first + $0 } }
        var subscriptions = patterns.map { [ScenePattern($0)] }
        for first in patterns.indices where first % 3 == 0 {
            for second in patterns.indices where second % 2 == 0 {
                subscriptions.append([ScenePattern(patterns[first]), ScenePattern(patterns[second])])
            }
        }
        var index = SubscriptionIndex<Void>()
        var live: [UInt64: [ScenePattern]] = [:]
        // Inserted out of ID order: the index must not rely on IDs coming in ascending.
        for (offset, patterns) in subscriptions.enumerated().reversed() {
            let id = UInt64(offset + 1)
            index.insert(id, patterns: patterns, payload: ())
            live[id] = patterns
        }
        let characters = ["a", "b", "-"]
        var texts: [String] = []
        var layer = [""]
        for _ in 1...3 {
            layer = layer.flatMap { prefix in characters.map { prefix + $0 } }
            texts += layer
        }
        let scenes = texts.compactMap { SceneID($0) }
        #expect(scenes.count == 26, "every valid ID of the alphabet: the first character is not `-`")
        var failures = 0
        for scene in scenes where Self.matches(index, scene) != SubscriptionPatterns.bruteForce(live, scene) {
            failures += 1
            Issue.record("scene \(scene): \(Self.matches(index, scene)), not what every pattern test finds")
            if failures > 3 { return }
        }
        #expect(Self.everyone(index) == live.keys.sorted())
    }

    /// Seeded schedules of subscribing and unsubscribing with random patterns; after every step, every scene drawn
    /// gets exactly the recipients a test of every subscription's patterns finds, in the same order.
    @Test func seededSchedulesFindWhatEveryPatternTestFinds() {
        for seed in UInt64(1)...300 {
            var rng = SplitMix64(seed: seed)
            var index = SubscriptionIndex<Void>()
            var live: [UInt64: [ScenePattern]] = [:]
            var nextID: UInt64 = 1
            for step in 0..<60 {
                if live.isEmpty || rng.chance(60) {
                    let patterns = rng.scenePatterns()
                    // IDs mostly ascend, as the registry hands them out, but the index must not depend on it.
                    let id = rng.chance(80) ? nextID : UInt64(1000 + rng.below(1000))
                    nextID += 1
                    guard live[id] == nil else { continue }
                    index.insert(id, patterns: patterns, payload: ())
                    live[id] = patterns
                } else {
                    let id = rng.pick(live.keys.sorted())
                    index.remove(id, patterns: live[id] ?? [])
                    live[id] = nil
                }
                let literals = live.values.flatMap { $0 }
                for _ in 0..<8 {
                    let scene = rng.sceneID(naming: literals)
                    let found = Self.matches(index, scene)
                    let expected = SubscriptionPatterns.bruteForce(live, scene)
                    #expect(found == expected, "seed \(seed), step \(step), scene \(scene), live \(live)")
                    if found != expected { return }
                }
                #expect(Self.everyone(index) == live.keys.sorted(), "seed \(seed), step \(step)")
                #expect(index.count == live.count, "seed \(seed), step \(step)")
            }
            for (id, patterns) in live { index.remove(id, patterns: patterns) }
            #expect(index.isEmpty, "seed \(seed): removing every subscription leaves the index empty")
        }
    }

    @Test func aSubscriptionNamingASceneTwiceAndByWildcardGetsEachEventOnce() {
        let main = scene("main")
        let both = [ScenePattern("main"), ScenePattern("main"), ScenePattern("m*"), ScenePattern("*n")]
        var index = SubscriptionIndex<Void>()
        index.insert(3, patterns: both, payload: ())
        index.insert(1, patterns: [ScenePattern("*")], payload: ())
        index.insert(2, patterns: [ScenePattern("main")], payload: ())
        #expect(Self.matches(index, main) == [1, 2, 3])
        #expect(Self.matches(index, scene("man")) == [1, 3])
        index.remove(3, patterns: both)
        #expect(Self.matches(index, main) == [1, 2])
        #expect(Self.matches(index, scene("man")) == [1])
        #expect(Self.everyone(index) == [1, 2])
        // Removing what is not indexed (anymore) leaves the others alone.
        index.remove(3, patterns: both)
        index.remove(0, patterns: [ScenePattern("main"), ScenePattern("*")])
        #expect(Self.matches(index, main) == [1, 2])
        #expect(Self.everyone(index) == [1, 2])
    }

    /// A subscription whose only pattern names no valid scene matches nothing, but still gets the events for every
    /// subscription, and leaves nothing behind.
    @Test func aLiteralThatNamesNoSceneStillCountsForEveryone() {
        var index = SubscriptionIndex<Void>()
        index.insert(1, patterns: [ScenePattern("no/scene"), ScenePattern("")], payload: ())
        #expect(Self.matches(index, scene("no")) == [])
        #expect(Self.everyone(index) == [1])
        #expect(!index.isEmpty)
        index.remove(1, patterns: [ScenePattern("no/scene"), ScenePattern("")])
        #expect(Self.everyone(index) == [])
        #expect(index.isEmpty)
    }
}
