#if canImport(Glibc)
import Glibc
#endif

/// What every scenario needs before it runs.
enum BenchSetup {
    /// Raises the descriptor limit, ignores SIGPIPE and, unless the scenario needs no daemon or drives a running
    /// one, finds (and builds) scenesyncd once rather than for every daemon the scenario starts.
    static func prepare(_ options: inout BenchOptions, needsDaemon: Bool = true) throws(BenchError) {
        UnixSocket.raiseDescriptorLimit()
        // A subscriber the daemon closed must not kill the bench with SIGPIPE; send() reports EPIPE instead.
        signal(SIGPIPE, SIG_IGN)
        if options.peers, options.daemon.socket != nil {
            throw BenchError("--peers compares daemons the bench starts itself; it does not go with --socket")
        }
        if needsDaemon, options.daemon.socket == nil {
            options.daemon.executable = try BenchDaemon.locate(options)
            options.daemon.build = false
        }
    }
}
