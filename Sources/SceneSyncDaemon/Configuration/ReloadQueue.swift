import NIOCore
import Synchronization

/// Runs reloads one at a time, each whole, in the order they were asked for.
///
/// A reload reads the file, then applies it, with suspensions in between. Two at once (a `SIGHUP` and a `reload`
/// request) could apply in the other order, so the older file would win. In order, the last reload asked for is the
/// last applied, and it read the file after every earlier one did.
final class ReloadQueue: Sendable {
    private struct State {
        var running = false
        /// Callers that arrived while one ran, in arrival order. Bounded by the callers themselves: the signal
        /// loop waits for its reload, and each connection answers its requests in order.
        var waiting = CircularBuffer<CheckedContinuation<Void, Never>>()
    }
    private let state = Mutex(State())

    /// How many callers wait for their turn: for tests, which wait on it instead of sleeping.
    var waitingCount: Int { state.withLock { $0.waiting.count } }

    func run<Result: Sendable>(_ body: () async -> Result) async -> Result {
        await withCheckedContinuation { (turn: CheckedContinuation<Void, Never>) in
            let now = state.withLock { state -> Bool in
                guard state.running else {
                    state.running = true
                    return true
                }
                state.waiting.append(turn)
                return false
            }
            if now { turn.resume() }
        }
        let result = await body()
        // The next caller's turn begins as this one's ends; `running` stays set across the hand-over.
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard !state.waiting.isEmpty else {
                state.running = false
                return nil
            }
            return state.waiting.removeFirst()
        }
        next?.resume()
        return result
    }
}
