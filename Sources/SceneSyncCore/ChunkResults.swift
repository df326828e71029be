import Synchronization

/// One result per chunk of work that callers may run on any threads, collected in chunk order.
final class ChunkResults<Value: Sendable>: Sendable {
    private let slots: Mutex<[Value?]>

    init(count: Int) {
        slots = Mutex([Value?](repeating: nil, count: count))
    }

    func set(_ chunk: Int, _ value: Value) {
        slots.withLock { $0[chunk] = value }
    }

    /// Every chunk's result, in chunk order; `nil` for a chunk that never ran.
    var all: [Value?] { slots.withLock { $0 } }
}
