#if canImport(Glibc)
import Glibc
#endif

/// A plain POSIX thread, for loops that wait in the kernel (`poll`, `sigwaitinfo`, `waitpid`) and must never take a
/// thread of Swift's cooperative pool, which has one per core: the daemon's inotify and signal loops (detached, for
/// as long as the process lives) and the benchmark's measuring clients (joined at the end of a run).
public struct PosixThread: Sendable {
    private let handle: pthread_t

    /// Starts `body` on a new joinable thread; it inherits the caller's signal mask.
    ///
    /// - Returns: the thread, or the error number of `pthread_create`.
    public static func start(
        named name: String? = nil, _ body: @escaping @Sendable () -> Void
    ) -> Result<PosixThread, PosixThreadError> {
        let context = Unmanaged.passRetained(
            Body {
                if let name { PosixThread.nameCurrentThread(name) }
                body()
            }
        ).toOpaque()
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
            return .failure(PosixThreadError(number: result))
        }
        return .success(PosixThread(handle: thread))
    }

    /// Starts `body` on a new detached thread, which nobody joins; it inherits the caller's signal mask.
    ///
    /// - Returns: `0`, or the error number of `pthread_create`.
    public static func detached(named name: String? = nil, _ body: @escaping @Sendable () -> Void) -> Int32 {
        switch start(named: name, body) {
        case .success(let thread):
            pthread_detach(thread.handle)
            return 0
        case .failure(let error):
            return error.number
        }
    }

    /// Sends `number` to this thread alone (`pthread_kill`).
    ///
    /// - Returns: `0`, or the error number of `pthread_kill`.
    public func signal(_ number: Int32) -> Int32 {
        pthread_kill(handle, number)
    }

    /// Names the calling thread (at most 15 bytes), as `ps -L`, `top -H` and `/proc/PID/task/TID/comm` show it: a
    /// thread that should have ended can then be told apart. Best effort: a name is only a label.
    static func nameCurrentThread(_ name: String) {
        let fd = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { return }
        defer { close(fd) }
        let bytes = Array(name.utf8.prefix(15))
        _ = write(fd, bytes, bytes.count)
    }

    /// Waits for the thread's body to return.
    public func join() {
        pthread_join(handle, nil)
    }

    private final class Body {
        let run: @Sendable () -> Void
        init(_ run: @escaping @Sendable () -> Void) { self.run = run }
    }
}

/// `pthread_create` failed: `number` is its error number (`EAGAIN` when the process is out of threads).
public struct PosixThreadError: Error, Sendable {
    public var number: Int32
}
