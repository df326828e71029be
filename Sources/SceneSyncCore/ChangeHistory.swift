/// The last `history.max_revisions` change records, in revision order, in a fixed ring so that appending never
/// reallocates or shifts.
public struct ChangeHistory: Sendable {
    public let limit: Int
    private var ring: [ChangeRecord] = []
    private var head = 0
    /// Every change after this revision is retained (up to the newest); older ones are compacted away. Starts at the
    /// restored revision, since history does not survive a restart.
    public private(set) var baseline: UInt64

    public init(limit: Int, startingAt revision: UInt64) {
        self.limit = max(0, limit)
        self.baseline = revision
        ring.reserveCapacity(min(self.limit, 1 << 16))
    }

    public var count: Int { ring.count }

    public var newestRevision: UInt64 { last?.clock.revision ?? baseline }

    private var last: ChangeRecord? {
        ring.isEmpty ? nil : ring[(head + ring.count - 1) % ring.count]
    }

    public mutating func append(_ record: ChangeRecord) {
        guard limit > 0 else {
            baseline = record.clock.revision
            return
        }
        if ring.count < limit {
            ring.append(record)
        } else {
            baseline = ring[head].clock.revision
            ring[head] = record
            head = (head + 1) % limit
        }
    }

    /// Oldest first.
    public var records: [ChangeRecord] {
        Array(ring[head...] + ring[..<head])
    }

    /// Every change after `revision`, oldest first, or `nil` when some of them were compacted away (or `revision`
    /// is newer than anything this history has seen, which only a clock from elsewhere can be).
    public func changes(after revision: UInt64) -> [ChangeRecord]? {
        guard revision >= baseline, revision <= newestRevision else { return nil }
        // Revisions are strictly increasing but not contiguous per history, so search.
        var low = 0
        var high = ring.count
        while low < high {
            let mid = (low + high) / 2
            if ring[(head + mid) % ring.count].clock.revision <= revision { low = mid + 1 } else { high = mid }
        }
        return (low..<ring.count).map { ring[(head + $0) % ring.count] }
    }

    /// A scene's records, newest first.
    public func records(for scene: SceneID, limit: Int? = nil) -> [ChangeRecord] {
        var result: [ChangeRecord] = []
        var offset = ring.count - 1
        while offset >= 0, limit.map({ result.count < $0 }) ?? true {
            let record = ring[(head + offset) % ring.count]
            if record.scene == scene { result.append(record) }
            offset -= 1
        }
        return result
    }
}
