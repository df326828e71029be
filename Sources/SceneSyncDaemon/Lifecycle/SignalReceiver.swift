import SceneSyncThreads
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A signal the daemon acts on (§7).
public enum DaemonSignal: Sendable, Equatable, CustomStringConvertible {
    /// `SIGUSR1`: the background phase.
    case backgroundPhase
    /// `SIGHUP`: reload the configuration.
    case reload
    /// `SIGTERM` or `SIGINT`: graceful shutdown.
    case terminate(name: String)

    public var description: String {
        switch self {
        case .backgroundPhase: "SIGUSR1"
        case .reload: "SIGHUP"
        case .terminate(let name): name
        }
    }

    init?(number: Int32) {
        switch number {
        case SIGUSR1: self = .backgroundPhase
        case SIGHUP: self = .reload
        case SIGTERM: self = .terminate(name: "SIGTERM")
        case SIGINT: self = .terminate(name: "SIGINT")
        default: return nil
        }
    }
}

/// Takes the daemon's signals with `sigwaitinfo(2)` on a thread of its own and hands them on as a stream.
///
/// The signals are blocked in every thread (the `scenesyncd` executable blocks them before any thread exists, see
/// `CDaemonSignals`), so they are never handled by their default action and never discarded: one that arrives
/// before this receiver starts stays pending in the kernel and is taken as soon as it does. No disposition is ever
/// set to `SIG_IGN`, which would discard pending signals, and no handler runs in signal context.
public final class SignalReceiver: Sendable {
    /// `SIGUSR1`, `SIGHUP`, `SIGTERM`, `SIGINT`.
    public static let numbers: [Int32] = [SIGUSR1, SIGHUP, SIGTERM, SIGINT]

    /// The receiving thread's name, so a test can see it is gone.
    static let threadName = "ssd-signals"

    public let signals: AsyncStream<DaemonSignal>
    private let continuation: AsyncStream<DaemonSignal>.Continuation
    /// The receiving thread while it runs, and whether ``stop()`` asked it to end.
    private let thread = Mutex<(running: PosixThread?, stopping: Bool)>((nil, false))

    public init() {
        (signals, continuation) = AsyncStream.makeStream(of: DaemonSignal.self, bufferingPolicy: .unbounded)
    }

    /// Blocks the daemon's signals in the calling thread, and so in every thread it starts from now on.
    public static func blockInCurrentThread() {
        var set = Self.signalSet()
        pthread_sigmask(SIG_BLOCK, &set, nil)
    }

    static func signalSet() -> sigset_t {
        var set = sigset_t()
        sigemptyset(&set)
        for number in numbers { sigaddset(&set, number) }
        return set
    }

    /// Starts the receiving thread, which runs until ``stop()``.
    public func start() throws(SystemError) {
        SignalReceiver.blockInCurrentThread()
        switch PosixThread.start(named: SignalReceiver.threadName, { self.run() }) {
        case .success(let started):
            thread.withLock { $0.running = started }
        case .failure(let error):
            throw SystemError("pthread_create", "signal thread", errno: error.number)
        }
    }

    /// Ends the receiving thread and the stream; the daemon calls it when it is done, so that a process that runs
    /// the daemon again (a test) never has two receivers competing for one signal. `sigwaitinfo` can only be woken
    /// by a signal: the thread is sent one of its own, to it alone. Signals that arrive later stay pending, as
    /// before the receiver started.
    public func stop() {
        let running = thread.withLock { state -> PosixThread? in
            state.stopping = true
            defer { state.running = nil }
            return state.running
        }
        if let running {
            // The thread exists until it returns from the wait this wakes, so the call cannot fail.
            _ = running.signal(SIGHUP)
            running.join()
        }
        continuation.finish()
    }

    private func run() {
        var set = SignalReceiver.signalSet()
        var info = siginfo_t()
        while true {
            let number = sigwaitinfo(&set, &info)
            if number < 0 { continue }  // EINTR: a signal outside the set interrupted the wait.
            // Once stopping, whatever was taken ends the thread: the daemon is done with signals by then. (The
            // kernel reports a signal sent to one thread as SI_USER on some versions, so the wake-up cannot be told
            // apart from a `kill` by its code.)
            if thread.withLock({ $0.stopping }) { return }
            if let signal = DaemonSignal(number: number) { continuation.yield(signal) }
        }
    }
}
