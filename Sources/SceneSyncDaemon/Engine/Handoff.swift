import Synchronization

/// A value handed from the task that made it to the one that takes it, leaving nothing behind.
///
/// An `async let` keeps its value until its scope ends, so what is read from it has a second owner: a restored
/// snapshot's scenes could not then be moved into the store, and copying them retained every scene's buffers. Taken
/// from here, the taker is the value's only owner.
final class Handoff<Value: Sendable>: Sendable {
    private let slot: Mutex<Value?>

    init(_ value: consuming Value) {
        slot = Mutex(Optional(value))
    }

    /// The value, the first time; `nil` after.
    func take() -> Value? {
        slot.withLock { $0.take() }
    }
}
