import Synchronization

/// What the engine hands out of its loop through `@Sendable` hooks (blocking jobs, a batch served later, a promise
/// kept), held for the harness to take. The harness runs on one thread, so the lock is never contended: it is
/// there because the hooks must be `Sendable`, not because anything crosses threads.
final class HarnessMailbox<Item: Sendable>: Sendable {
    private let items = Mutex<[Item]>([])

    func post(_ item: Item) {
        items.withLock { $0.append(item) }
    }

    /// Everything posted since the last take, in order.
    func takeAll() -> [Item] {
        items.withLock { items in
            defer { items = [] }
            return items
        }
    }
}
