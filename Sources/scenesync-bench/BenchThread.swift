#if canImport(Glibc)
import Glibc
#endif

/// A joinable POSIX thread.
///
/// The measuring clients run on their own threads, blocking in `poll`, rather than on Swift concurrency's
/// cooperative pool: the pool has one thread per core and would share them with the clients' own bookkeeping, and
/// a reader must wake as soon as the kernel has bytes.
struct BenchThread {
    private let handle: pthread_t

    private final class Body {
        let run: @Sendable () -> Void
        init(_ run: @escaping @Sendable () -> Void) { self.run = run }
    }

    static func start(_ body: @escaping @Sendable () -> Void) -> BenchThread {
        let context = Unmanaged.passRetained(Body(body)).toOpaque()
        var thread = pthread_t()
        let result = pthread_create(
            &thread, nil,
            { context in
                guard let context else { return nil }
                Unmanaged<Body>.fromOpaque(context).takeRetainedValue().run()
                return nil
            }, context)
        guard result == 0 else {
            printError("scenesync-bench: cannot start a thread (error \(result))")
            exit(1)
        }
        return BenchThread(handle: thread)
    }

    func join() {
        pthread_join(handle, nil)
    }
}
