extension ConnectionOutput {
    /// How many change events of a subscription are queued now, counted item by item rather than read from the
    /// count the bound is enforced with: for tests of the bound itself, which must not trust that count.
    func queuedChangeEvents(subscription: UInt64) -> Int {
        items.reduce(0) { count, item in
            guard case .event(let owner, .change, _) = item, owner == subscription else { return count }
            return count + 1
        }
    }
}
