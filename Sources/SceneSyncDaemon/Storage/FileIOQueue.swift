import Dispatch

/// The serial queue on which the engine's scene-file reads, writes and renames run.
///
/// The engine is an actor on Swift's cooperative pool, which has one thread per core (two here): a `rename` or a
/// slow disk there would stall every client and subscriber. Dispatch's threads for this queue are not the pool's,
/// and one queue keeps the disk operations in the order the engine asked for them.
final class FileIOQueue: Sendable {
    private let queue = DispatchQueue(label: "scenesync.file-io", qos: .userInitiated)

    /// Runs `job` on the queue and resumes the caller with its result, leaving the caller's executor free meanwhile.
    func run<Result: Sendable>(_ job: @escaping @Sendable () -> Result) async -> Result {
        await withCheckedContinuation { continuation in
            queue.async { continuation.resume(returning: job()) }
        }
    }
}
