import SceneSyncCore
import SceneSyncTestKit
import Testing

@testable import SceneSyncDaemon

/// Seeded schedules of connections coming and going, subscribing and unsubscribing (their own subscriptions, others',
/// ones that are gone) against a model that is only a dictionary: after every step the registry's recipients of each
/// scene drawn, and of an event for all, are the model's, found by testing every subscription's patterns.
@Suite struct SubscriptionRegistryScheduleTests {
    /// The model: each live subscription's connection and patterns.
    struct Model {
        var connections: Set<UInt64> = []
        var subscriptions: [UInt64: (connection: UInt64, patterns: [ScenePattern])] = [:]

        var patterns: [UInt64: [ScenePattern]] { subscriptions.mapValues(\.patterns) }
    }

    @Test func seededSchedulesKeepTheIndexInStep() {
        for seed in UInt64(1)...200 {
            var rng = SplitMix64(seed: seed)
            var registry = SubscriptionRegistry()
            var model = Model()
            var everConnected: [UInt64] = []
            var everSubscribed: [UInt64] = [0]
            for step in 0..<80 {
                let action = rng.below(100)
                if model.connections.isEmpty || action < 15 {
                    let connection = SubscriptionRegistryTests.connect(&registry)
                    model.connections.insert(connection)
                    everConnected.append(connection)
                } else if action < 60 {
                    // Connections that are gone too: the registry must refuse them.
                    let connection = rng.pick(everConnected)
                    let patterns = rng.scenePatterns()
                    let subscription = registry.subscribe(connection: connection, patterns: patterns)
                    #expect(
                        (subscription != nil) == model.connections.contains(connection),
                        "seed \(seed), step \(step): subscribing on connection \(connection)")
                    if let subscription {
                        model.subscriptions[subscription.id] = (connection, patterns)
                        everSubscribed.append(subscription.id)
                    }
                } else if action < 90 {
                    // Often the owner, sometimes another connection, sometimes a subscription that is gone.
                    let id = rng.pick(everSubscribed)
                    let owner = model.subscriptions[id]?.connection
                    let connection = rng.chance(75) ? (owner ?? rng.pick(everConnected)) : rng.pick(everConnected)
                    let ended = registry.unsubscribe(connection: connection, subscription: id)
                    #expect(
                        (ended != nil) == (owner == connection), "seed \(seed), step \(step): unsubscribing \(id)")
                    if owner == connection { model.subscriptions[id] = nil }
                } else {
                    let connection = rng.pick(everConnected)
                    registry.unregister(connection: connection)
                    model.connections.remove(connection)
                    model.subscriptions = model.subscriptions.filter { $0.value.connection != connection }
                }
                guard Self.agree(registry, model, &rng, "seed \(seed), step \(step)") else { return }
            }
        }
    }

    /// Whether the registry's recipients are the model's, for an event for all and for scenes drawn; records what
    /// differs.
    static func agree(
        _ registry: SubscriptionRegistry, _ model: Model, _ rng: inout SplitMix64, _ context: String
    ) -> Bool {
        let live = model.patterns
        let literals = live.values.flatMap { $0 }
        var agreed = true
        for scene in [nil] + (0..<6).map({ _ in rng.sceneID(naming: literals) }) {
            let found = SubscriptionRegistryTests.recipients(registry, scene)
            let expected = SubscriptionPatterns.bruteForce(live, scene)
            #expect(found == expected, "\(context), scene \(scene?.rawValue ?? "(all)")")
            agreed = agreed && found == expected
        }
        #expect(registry.subscriptions.keys.sorted() == live.keys.sorted(), "\(context): the subscriptions")
        return agreed
    }
}
