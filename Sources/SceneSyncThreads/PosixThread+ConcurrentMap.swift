import Synchronization

#if canImport(Glibc)
import Glibc
#endif

extension PosixThread {
    /// `(0..<count).map(transform)`, with the calls spread over the calling thread and one thread per other core,
    /// each taking the next index until none is left. Returns once every call has returned and every thread it
    /// started has ended. For CPU work that nothing else waits on, such as decoding a snapshot at start, before the
    /// daemon's own threads and tasks run. Without a thread (`pthread_create` failing) the caller does it all.
    public static func concurrentMap<Value: Sendable>(
        count: Int, named name: String, _ transform: @Sendable (Int) -> Value
    ) -> [Value] {
        guard count > 1 else { return (0..<count).map(transform) }
        return withoutActuallyEscaping(transform) { transform in
            let work = SharedWork<Value>(count: count)
            let run: @Sendable () -> Void = {
                while let index = work.takeIndex() { work.store(transform(index), at: index) }
            }
            let cores = max(1, min(count, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))))
            var threads: [PosixThread] = []
            for _ in 1..<cores {
                if case .success(let thread) = start(named: name, run) { threads.append(thread) }
            }
            run()
            for thread in threads { thread.join() }
            return work.results()
        }
    }
}

/// The next index to hand out and the results so far, shared by the threads of one
/// ``PosixThread/concurrentMap(count:named:_:)``.
private final class SharedWork<Value: Sendable>: Sendable {
    private let count: Int
    private let next = Atomic<Int>(0)
    private let slots: Mutex<[Value?]>

    init(count: Int) {
        self.count = count
        slots = Mutex([Value?](repeating: nil, count: count))
    }

    func takeIndex() -> Int? {
        let index = next.add(1, ordering: .relaxed).oldValue
        return index < count ? index : nil
    }

    func store(_ value: Value, at index: Int) {
        slots.withLock { $0[index] = value }
    }

    /// Every result, once every thread has ended.
    func results() -> [Value] {
        slots.withLock { slots in
            slots.map { value in
                guard let value else { preconditionFailure("an index of concurrentMap was never computed") }
                return value
            }
        }
    }
}
