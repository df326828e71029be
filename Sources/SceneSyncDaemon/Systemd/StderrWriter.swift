import Dispatch
import SceneSyncThreads
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Log lines for stderr, written by one thread of their own behind a bounded queue.
///
/// A `write(2)` to stderr blocks whenever the reader falls behind: journald under load, a terminal scrolled back,
/// a pipe nobody drains. Written by the caller, that would stall the engine's actor or an event loop in the middle
/// of a change. Here a caller only appends to the queue; when the queue is full the line is dropped and counted,
/// and the writer says how many were dropped once stderr takes lines again. Queued lines are written at exit
/// (``flush(within:)``, registered with `atexit` when the thread starts), for at most a second; a crash (a failed
/// precondition, the watchdog's `SIGABRT`) loses the lines still queued, which only a write by the caller kept.
final class StderrWriter: Sendable {
    /// Everything the daemon's loggers write.
    static let shared = StderrWriter(fd: STDERR_FILENO, bound: StderrWriter.defaultBound)

    /// 1 MiB of lines: thousands of them, enough for any burst a healthy reader takes in a moment.
    static let defaultBound = 1 << 20

    private struct Queue {
        var lines: [[UInt8]] = []
        var bytes = 0
        var dropped = 0
        /// Whether the writer holds lines it took and has not written yet.
        var writing = false
        var thread = ThreadState.notStarted
    }

    private enum ThreadState {
        case notStarted
        case running
        /// The thread could not be started: each line is written by its caller, as before the queue existed.
        case unavailable
    }

    let fd: Int32
    let bound: Int
    private let queue = Mutex(Queue())
    private let wake = DispatchSemaphore(value: 0)

    init(fd: Int32, bound: Int) {
        self.fd = fd
        self.bound = bound
    }

    /// Queues one whole line (its `\n` included); never waits for stderr.
    func write(_ line: String) {
        let bytes = Array(line.utf8)
        enum Next { case queued(wake: Bool), start, dropped, direct }
        let next = queue.withLock { queue -> Next in
            if case .unavailable = queue.thread { return .direct }
            // A line longer than the bound still goes into an empty queue: it is one line, not a backlog.
            guard queue.lines.isEmpty || queue.bytes + bytes.count <= bound else {
                queue.dropped += 1
                return .dropped
            }
            let wasEmpty = queue.lines.isEmpty
            queue.lines.append(bytes)
            queue.bytes += bytes.count
            if case .notStarted = queue.thread {
                queue.thread = .running
                return .start
            }
            return .queued(wake: wasEmpty)
        }
        switch next {
        case .queued(let wake):
            if wake { self.wake.signal() }
        case .start:
            start()
            wake.signal()
        case .dropped:
            break  // the queue holds lines, so the writer is already woken, and reports the count with them
        case .direct:
            StderrLogHandler.emit(bytes, to: fd)
        }
    }

    /// Waits until every queued line is written, for at most `timeout`: at exit, a stderr that takes nothing must
    /// not keep the process from ending.
    func flush(within timeout: Duration = .seconds(1)) {
        let deadline = ContinuousClock.now + timeout
        while !isIdle, ContinuousClock.now < deadline {
            usleep(1000)  // only at exit: nothing else waits on this thread
        }
    }

    /// Whether every line queued so far is written, and every drop reported.
    var isIdle: Bool { queue.withLock { $0.lines.isEmpty && !$0.writing && $0.dropped == 0 } }

    private func start() {
        let started = PosixThread.detached(named: "stderr-log") { [self] in
            while true {
                wake.wait()
                writeQueued()
            }
        }
        if started != 0 {
            // No thread: write what is queued now and every later line directly.
            let lines = queue.withLock { queue in
                queue.thread = .unavailable
                defer { queue.lines = [] }
                return queue.lines
            }
            for line in lines { StderrLogHandler.emit(line, to: fd) }
            return
        }
        if self === StderrWriter.shared { atexit { StderrWriter.shared.flush() } }
    }

    private func writeQueued() {
        let (lines, dropped) = queue.withLock { queue in
            defer {
                queue.lines = []
                queue.bytes = 0
                queue.dropped = 0
                queue.writing = true
            }
            return (queue.lines, queue.dropped)
        }
        for line in lines { StderrLogHandler.emit(line, to: fd) }
        if dropped > 0 {
            StderrLogHandler.emit(
                Array("scenesyncd: \(dropped) log lines were dropped: stderr did not keep up\n".utf8), to: fd)
        }
        queue.withLock { $0.writing = false }
    }
}
