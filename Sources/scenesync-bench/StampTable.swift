/// Send times (`Monotonic.now()`), indexed by a key the subscribers can read cheaply from an event: the offset of
/// a change's revision, or a scene file write's sequence number.
///
/// The writer stores a time before the change can exist (before the `send` or `rename`); a reader looks it up only
/// after the daemon delivered that change, so the kernel round trip orders the two. Plain memory rather than
/// atomics keeps the per-event cost to one load.
final class StampTable: @unchecked Sendable {
    let capacity: Int
    private let stamps: UnsafeMutablePointer<Int64>

    init(capacity: Int) {
        self.capacity = max(1, capacity)
        stamps = .allocate(capacity: self.capacity)
        stamps.initialize(repeating: 0, count: self.capacity)
    }

    deinit { stamps.deallocate() }

    @inline(__always)
    func set(_ key: Int, _ time: Int64) {
        if key >= 0, key < capacity { stamps[key] = time }
    }

    /// The stored time, or 0 when the key was never stamped.
    @inline(__always)
    func get(_ key: Int) -> Int64 {
        key >= 0 && key < capacity ? stamps[key] : 0
    }
}
