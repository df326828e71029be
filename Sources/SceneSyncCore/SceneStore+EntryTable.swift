extension SceneStore {
    /// The entries in a dense array (of chunks) behind an open-addressing index of slot numbers (linear probing,
    /// backward-shift deletion). A dictionary of entries would reserve entry-sized room for its whole table, which
    /// is a power of two at most three quarters full, and even a dictionary of slots keeps a 16-byte key per bucket;
    /// this index costs 4 bytes per bucket.
    struct EntryTable: Sendable {
        /// Slot + 1 per bucket; 0 is empty. The count is 0 or a power of two.
        private var buckets: [Int32] = []
        private(set) var values = ChunkedArray<Entry>()

        var count: Int { values.count }

        /// By index: mapping the entries themselves would copy each one, retaining its buffers, for its ID.
        var keys: some Collection<SceneID> {
            let values = values
            return values.indices.lazy.map { values[$0].state.id }
        }

        private func home(_ id: SceneID) -> Int { id.hashValue & (buckets.count - 1) }

        /// The bucket holding `id`, or the empty bucket where it would go, and its slot if present.
        private func find(_ id: SceneID) -> (bucket: Int, slot: Int?) {
            var bucket = home(id)
            while true {
                let stored = Int(buckets[bucket])
                if stored == 0 { return (bucket, nil) }
                if values[stored - 1].state.id == id { return (bucket, stored - 1) }
                bucket = (bucket + 1) & (buckets.count - 1)
            }
        }

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
                if !buckets.isEmpty, let slot = find(id).slot {
                    values[slot] = newValue
                    return
                }
                if (values.count + 1) * 4 > buckets.count * 3 { grow() }
                buckets[find(id).bucket] = Int32(values.count + 1)
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
                var bucket = home(entry.state.id)
                while buckets[bucket] != 0 { bucket = (bucket + 1) & (buckets.count - 1) }
                buckets[bucket] = Int32(slot + 1)
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
                let wanted = home(values[Int(buckets[next]) - 1].state.id)
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
                buckets[find(moved.state.id).bucket] = Int32(slot + 1)
                values[slot] = moved
            }
            values.removeLast()
            return removed
        }
    }
}
