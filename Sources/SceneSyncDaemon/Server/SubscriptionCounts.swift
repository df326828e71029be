/// The counted events each subscription of one connection has queued (§6 `subscriber_queue`).
///
/// Read and bumped for every delivery. Nearly every connection has one subscription, so the first one's count is
/// kept inline, with no hashing; any other goes to a table.
struct SubscriptionCounts: Sendable {
    private var first: (id: UInt64, count: Int)? = nil
    private var others: [UInt64: Int] = [:]

    /// Counts one more event of `subscription`, unless it has `limit` queued already: then `false`, and nothing
    /// changes.
    mutating func increment(_ subscription: UInt64, limit: Int) -> Bool {
        if let first, first.id == subscription {
            guard first.count < limit else { return false }
            self.first = (subscription, first.count + 1)
            return true
        }
        if first == nil, others.isEmpty {
            guard limit > 0 else { return false }
            first = (subscription, 1)
            return true
        }
        var counted = false
        Self.update(&others[subscription, default: 0]) { queued in
            if queued < limit {
                queued += 1
                counted = true
            }
        }
        return counted
    }

    @inline(__always)
    private static func update(_ value: inout Int, _ body: (inout Int) -> Void) { body(&value) }

    /// Forgets one subscription's count.
    mutating func remove(_ subscription: UInt64) {
        if first?.id == subscription {
            first = nil
        } else if !others.isEmpty {
            others[subscription] = nil
        }
    }

    /// Every count drops to zero (the writer took every queued item).
    mutating func removeAll() {
        first = nil
        if !others.isEmpty { others.removeAll(keepingCapacity: true) }
    }

    /// The count of `subscription`, for tests.
    func count(of subscription: UInt64) -> Int {
        if let first, first.id == subscription { return first.count }
        return others[subscription] ?? 0
    }
}
