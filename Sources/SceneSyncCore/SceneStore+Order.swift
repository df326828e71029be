extension SceneStore {
    /// The slots of the store's entries, in the order of their IDs.
    ///
    /// What a snapshot and `list` walk the scenes in. Sorting the scenes themselves moved 64-byte values that each
    /// retain three buffers, and compared IDs through their strings; this sorts a key of 24 bytes per scene, whose
    /// first 16 bytes of ID decide almost every comparison (IDs sharing longer prefixes are compared whole).
    func slotsInIDOrder() -> [Int32] {
        let values = entries.values
        var keys: [(key: SceneID.SortKey, slot: Int32)] = []
        keys.reserveCapacity(values.count)
        for slot in values.indices { keys.append((SceneID.SortKey(values[slot].state.id), Int32(slot))) }
        keys.sort { left, right in
            if left.key.decides(against: right.key) { return left.key.precedes(right.key) }
            return values[Int(left.slot)].state.id < values[Int(right.slot)].state.id
        }
        return keys.map(\.slot)
    }
}
