extension SceneStore {
    /// The entries in a dense array (of chunks) behind an open-addressing index of slot numbers (linear probing,
    /// backward-shift deletion). A dictionary of entries would reserve entry-sized room for its whole table, which
    /// is a power of two at most three quarters full, and even a dictionary of slots keeps a 16-byte key per bucket;
    /// this index costs 4 bytes per bucket.
    ///
    /// Each bucket also keeps 8 bits of its ID's hash, so a probe reads an entry's ID only when those match: the
    /// entries are far apart in memory, and comparing every ID a probe passed was most of a big restore's filling
    /// of the store. That leaves 24 bits for the slot: at most ``maxCount`` scenes.
    struct EntryTable: Sendable {
        /// Per bucket: 0 when empty, else the hash's top 8 bits above slot + 1. The count is 0 or a power of two.
        private var buckets: [UInt32] = []
        private(set) var values = ChunkedArray<Entry>()

        /// Scenes one store holds at most.
        static let maxCount = Int(slotMask) - 1
        private static let slotMask: UInt32 = 0xFF_FFFF

        var count: Int { values.count }

        /// By index: mapping the entries themselves would copy each one, retaining its buffers, for its ID.
        var keys: some Collection<SceneID> {
            let values = values
            return values.indices.lazy.map { values[$0].state.id }
        }

        private func home(_ hash: Int) -> Int { hash & (buckets.count - 1) }

        /// A bucket's value for `slot` of an ID with this hash.
        private static func bucketValue(slot: Int, hash: Int) -> UInt32 {
            UInt32(truncatingIfNeeded: UInt(bitPattern: hash) >> 56) << 24 | UInt32(slot + 1)
        }

        private static func slot(of stored: UInt32) -> Int { Int(stored & slotMask) - 1 }

        /// The bucket holding `id`, or the empty bucket where it would go, and its slot if present.
        private func find(_ id: SceneID, hash: Int) -> (bucket: Int, slot: Int?) {
            let fingerprint = Self.bucketValue(slot: 0, hash: hash) & ~Self.slotMask
            var bucket = home(hash)
            while true {
                let stored = buckets[bucket]
                if stored == 0 { return (bucket, nil) }
                if stored & ~Self.slotMask == fingerprint, values[Self.slot(of: stored)].state.id == id {
                    return (bucket, Self.slot(of: stored))
                }
                bucket = (bucket + 1) & (buckets.count - 1)
            }
        }

        private func find(_ id: SceneID) -> (bucket: Int, slot: Int?) { find(id, hash: id.hashValue) }

        subscript(id: SceneID) -> Entry? {
            get {
                guard !buckets.isEmpty, let slot = find(id).slot else { return nil }
                return values[slot]
            }
            set {
                guard let newValue else {
                    removeValue(forKey: id)
                    return
                }
                // One probe, with room made first: growing only moves buckets, never an entry.
                if (values.count + 1) * 4 > buckets.count * 3 { grow() }
                let hash = id.hashValue
                let (bucket, found) = find(id, hash: hash)
                if let found {
                    values[found] = newValue
                    return
                }
                precondition(values.count < Self.maxCount, "a store holds at most \(Self.maxCount) scenes")
                buckets[bucket] = Self.bucketValue(slot: values.count, hash: hash)
                values.append(newValue)
            }
        }

        /// Changes the entry of `id`, if there is one, where it is stored.
        mutating func modify(_ id: SceneID, _ body: (inout Entry) -> Void) {
            guard !buckets.isEmpty, let slot = find(id).slot else { return }
            body(&values[slot])
        }

        /// Room for `count` entries without growing: a restore of many scenes would otherwise rebuild the index
        /// once per doubling.
        mutating func reserveCapacity(_ count: Int) {
            values.reserveCapacity(count)
            var size = max(16, buckets.count)
            while count * 4 > size * 3 { size *= 2 }
            if size > buckets.count { rebuild(buckets: size) }
        }

        private mutating func grow() {
            rebuild(buckets: max(16, buckets.count * 2))
        }

        private mutating func rebuild(buckets size: Int) {
            buckets = Array(repeating: 0, count: size)
            for (slot, entry) in values.enumerated() {
                let hash = entry.state.id.hashValue
                var bucket = home(hash)
                while buckets[bucket] != 0 { bucket = (bucket + 1) & (buckets.count - 1) }
                buckets[bucket] = Self.bucketValue(slot: slot, hash: hash)
            }
        }

        @discardableResult
        mutating func removeValue(forKey id: SceneID) -> Entry? {
            guard !buckets.isEmpty else { return nil }
            let (bucket, found) = find(id)
            guard let slot = found else { return nil }
            let removed = values[slot]
            // Close the gap: move back every following entry of the run that may not stay behind the hole.
            let mask = buckets.count - 1
            var hole = bucket
            var next = (hole + 1) & mask
            while buckets[next] != 0 {
                let wanted = home(values[Self.slot(of: buckets[next])].state.id.hashValue)
                let stays = hole <= next ? (hole < wanted && wanted <= next) : (hole < wanted || wanted <= next)
                if !stays {
                    buckets[hole] = buckets[next]
                    hole = next
                }
                next = (next + 1) & mask
            }
            buckets[hole] = 0
            // Keep the values dense: the last one takes the freed slot.
            let last = values.count - 1
            if slot != last {
                let moved = values[last]
                let hash = moved.state.id.hashValue
                buckets[find(moved.state.id, hash: hash).bucket] = Self.bucketValue(slot: slot, hash: hash)
                values[slot] = moved
            }
            values.removeLast()
            return removed
        }
    }
}
