import Synchronization

#if canImport(Glibc)
import Glibc
#endif

extension PosixThread {
    /// Calls `body` once for every index below `iterations`, on the calling thread and one thread per other core,
    /// each taking the next index until none is left; returns once every call has returned, and every thread it
    /// started has ended. For CPU work that nothing else waits on, such as decoding a snapshot at start, before
    /// the daemon's own threads and tasks run. Without a thread (`pthread_create` failing) the caller does it all.
    public static func concurrentPerform(
        iterations: Int, named name: String, _ body: @Sendable (Int) -> Void
    ) {
        guard iterations > 1 else {
            if iterations == 1 { body(0) }
            return
        }
        withoutActuallyEscaping(body) { body in
            let next = NextIndex()
            let work: @Sendable () -> Void = {
                while true {
                    let index = next.take()
                    guard index < iterations else { return }
                    body(index)
                }
            }
            let cores = max(1, min(iterations, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))))
            var threads: [PosixThread] = []
            for _ in 1..<cores {
                if case .success(let thread) = start(named: name, work) { threads.append(thread) }
            }
            work()
            for thread in threads { thread.join() }
        }
    }
}

/// The next index to hand out, shared by the threads of one ``PosixThread/concurrentPerform(iterations:named:_:)``.
private final class NextIndex: Sendable {
    private let value = Atomic<Int>(0)

    func take() -> Int { value.add(1, ordering: .relaxed).oldValue }
}
