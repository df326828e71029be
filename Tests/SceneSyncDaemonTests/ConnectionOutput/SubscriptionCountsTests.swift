import SceneSyncTestKit
import Testing

@testable import SceneSyncDaemon

@Suite struct SubscriptionCountsTests {
    /// Random inputs on a few subscriptions, checked against a plain table after each one.
    @Test(arguments: 0..<20)
    func agreesWithATable(seed: Int) {
        var random = SplitMix64(seed: UInt64(seed))
        var counts = SubscriptionCounts()
        var model: [UInt64: Int] = [:]
        let limit = random.below(4)
        for _ in 0..<2_000 {
            let subscription = UInt64(random.below(4))
            switch random.below(10) {
            case 0:
                counts.remove(subscription)
                model[subscription] = nil
            case 1:
                counts.removeAll()
                model.removeAll()
            default:
                let queued = model[subscription, default: 0]
                let counted = counts.increment(subscription, limit: limit)
                #expect(counted == (queued < limit))
                if counted { model[subscription] = queued + 1 }
            }
            for id in 0..<UInt64(4) { #expect(counts.count(of: id) == model[id, default: 0]) }
        }
    }

}
