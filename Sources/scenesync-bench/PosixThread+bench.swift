import SceneSyncThreads

#if canImport(Glibc)
import Glibc
#endif

extension PosixThread {
    /// The measuring clients run on their own threads, blocking in `poll`, rather than on Swift concurrency's
    /// cooperative pool: the pool has one thread per core and would share them with the clients' own bookkeeping,
    /// and a reader must wake as soon as the kernel has bytes. A run without its readers measures nothing, so a
    /// thread that cannot start ends the bench.
    static func startOrExit(_ body: @escaping @Sendable () -> Void) -> PosixThread {
        switch start(body) {
        case .success(let thread):
            return thread
        case .failure(let error):
            printError("scenesync-bench: cannot start a thread (error \(error.number))")
            exit(1)
        }
    }
}
