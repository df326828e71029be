#if canImport(Glibc)
import Glibc
#endif

/// A plain detached pthread, for the two loops that wait in the kernel for as long as the process lives (inotify's
/// `poll`, the signals' `sigwaitinfo`): waits that must never take a thread of Swift's cooperative pool.
enum DetachedThread {
    /// Starts `body` on a new detached thread; it inherits the caller's signal mask.
    ///
    /// - Returns: `0`, or the error number of `pthread_create`.
    static func start(_ body: @escaping @Sendable () -> Void) -> Int32 {
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
            Unmanaged<Body>.fromOpaque(context).release()
            return result
        }
        pthread_detach(thread)
        return 0
    }

    private final class Body {
        let run: @Sendable () -> Void
        init(_ run: @escaping @Sendable () -> Void) { self.run = run }
    }
}
