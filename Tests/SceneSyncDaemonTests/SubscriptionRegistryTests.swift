import SceneSyncCore
import SceneSyncTestKit
import Testing

@testable import SceneSyncDaemon

/// The registry keeps its index in step with its subscriptions: subscribing, unsubscribing and a connection going
/// away change who receives an event at once, and only for the subscriptions concerned.
@Suite struct SubscriptionRegistryTests {
    static func recipients(_ registry: SubscriptionRegistry, _ scene: SceneID?) -> [UInt64] {
        var ids: [UInt64] = []
        registry.forEachRecipient(of: scene) { ids.append($0.id) }
        return ids
    }

    static func connect(_ registry: inout SubscriptionRegistry) -> UInt64 {
        registry.register(outbox: Outbox(limit: 64, counters: DeliveryCounters()), credentials: nil, close: {})
    }

    static func subscribe(
        _ registry: inout SubscriptionRegistry, _ connection: UInt64, _ patterns: String...
    ) throws -> UInt64 {
        let subscription = registry.subscribe(connection: connection, patterns: patterns.map(ScenePattern.init))
        return try #require(subscription).id
    }

    @Test func recipientsComeOnceInIDOrderAcrossConnections() throws {
        var registry = SubscriptionRegistry()
        let first = Self.connect(&registry)
        let second = Self.connect(&registry)
        let everything = try Self.subscribe(&registry, second, "*")
        let named = try Self.subscribe(&registry, first, "main", "main")
        let both = try Self.subscribe(&registry, second, "m*", "main")
        let other = try Self.subscribe(&registry, first, "other")
        #expect(Self.recipients(registry, scene("main")) == [everything, named, both])
        #expect(Self.recipients(registry, scene("other")) == [everything, other])
        #expect(Self.recipients(registry, scene("mine")) == [everything, both])
        #expect(Self.recipients(registry, nil) == [everything, named, both, other])
    }

    /// Enough subscriptions that the dictionary they live in would hand them out in another order.
    @Test func everySubscriptionGetsAnEventForAllInIDOrder() throws {
        var registry = SubscriptionRegistry()
        let connections = (0..<4).map { _ in Self.connect(&registry) }
        var ids: [UInt64] = []
        for number in 0..<64 {
            ids.append(try Self.subscribe(&registry, connections[number % 4], number % 2 == 0 ? "s\(number)" : "*"))
        }
        #expect(Self.recipients(registry, nil) == ids)
    }

    @Test func unsubscribingTakesTheSubscriptionOffEveryList() throws {
        var registry = SubscriptionRegistry()
        let first = Self.connect(&registry)
        let second = Self.connect(&registry)
        let named = try Self.subscribe(&registry, first, "main")
        let wildcard = try Self.subscribe(&registry, first, "m*", "other")
        let everything = try Self.subscribe(&registry, second, "*")

        // Another connection cannot end it: nothing changes.
        #expect(registry.unsubscribe(connection: second, subscription: named) == nil)
        #expect(Self.recipients(registry, scene("main")) == [named, wildcard, everything])

        #expect(registry.unsubscribe(connection: first, subscription: named)?.id == named)
        #expect(Self.recipients(registry, scene("main")) == [wildcard, everything])
        #expect(Self.recipients(registry, nil) == [wildcard, everything])
        #expect(registry.unsubscribe(connection: first, subscription: named) == nil)

        #expect(registry.unsubscribe(connection: first, subscription: wildcard)?.id == wildcard)
        #expect(Self.recipients(registry, scene("main")) == [everything])
        #expect(Self.recipients(registry, scene("other")) == [everything])
        #expect(Self.recipients(registry, nil) == [everything])
    }

    @Test func aConnectionGoingAwayTakesOnlyItsSubscriptionsOff() throws {
        var registry = SubscriptionRegistry()
        let leaving = Self.connect(&registry)
        let staying = Self.connect(&registry)
        _ = try Self.subscribe(&registry, leaving, "main")
        let kept = try Self.subscribe(&registry, staying, "main")
        _ = try Self.subscribe(&registry, leaving, "*")
        _ = try Self.subscribe(&registry, leaving, "o*", "main")
        let keptWildcard = try Self.subscribe(&registry, staying, "o*")

        registry.unregister(connection: leaving)
        #expect(Self.recipients(registry, scene("main")) == [kept])
        #expect(Self.recipients(registry, scene("other")) == [keptWildcard])
        #expect(Self.recipients(registry, nil) == [kept, keptWildcard])
        let late = registry.subscribe(connection: leaving, patterns: [.all])
        #expect(late == nil, "a connection that is gone subscribes no more")
        #expect(Self.recipients(registry, nil) == [kept, keptWildcard])

        registry.unregister(connection: staying)
        #expect(Self.recipients(registry, scene("main")) == [])
        #expect(Self.recipients(registry, nil) == [])
    }

    /// What ``EngineCore/deliver(_:body:matching:)`` does with the recipients: the events one connection's
    /// subscriptions get are queued event after event, and within an event by subscription ID.
    @Test func oneConnectionsEventsKeepTheirOrder() throws {
        var registry = SubscriptionRegistry()
        let outbox = Outbox(limit: 64, counters: DeliveryCounters())
        let connection = registry.register(outbox: outbox, credentials: nil, close: {})
        let bystander = Self.connect(&registry)
        _ = try Self.subscribe(&registry, connection, "m*", "main")
        _ = try Self.subscribe(&registry, bystander, "*")
        _ = try Self.subscribe(&registry, connection, "main")
        _ = try Self.subscribe(&registry, connection, "*")
        let events: [(name: String, scene: SceneID?)] = [
            ("e1", scene("main")), ("e2", scene("other")), ("e3", nil), ("e4", scene("mine")), ("e5", scene("main")),
        ]
        for event in events {
            registry.forEachRecipient(of: event.scene) { recipient in
                recipient.payload.enqueue(subscription: recipient.id, event: .change, body: Array(event.name.utf8))
            }
        }
        #expect(
            outbox.takeQueued().map(Self.subscriptionAndBody) == [
                "1:e1", "3:e1", "4:e1", "4:e2", "1:e3", "3:e3", "4:e3", "1:e4", "4:e4", "1:e5", "3:e5", "4:e5",
            ])
    }

    /// `<subscription>:<body>` of an event: the events above carry their names in their bodies.
    static func subscriptionAndBody(_ item: ConnectionOutput.Item) -> String {
        guard case .event(let subscription, _, let body) = item else { return "not an event" }
        return "\(subscription):" + String(decoding: body, as: UTF8.self)
    }
}
