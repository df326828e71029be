import Glibc
import SceneSyncThreads
import Synchronization

/// The thread side of ``InotifyWatcher``: owns the inotify descriptor, the wake-up pipe and the queue of events
/// read but not yet taken.
///
/// Reading happens under one lock, from the thread when the kernel has events, or from ``take()`` when the engine
/// wants everything the kernel holds right now (before it decides a client's change). Because every read appends to
/// the one queue and every take empties it from the front, events are taken exactly once and in kernel order,
/// whoever read them. The thread only announces that the queue is not empty; it never hands events over itself.
///
/// A blocking thread rather than NIO or a polling task, because the only thing it waits for is the kernel, and the
/// latency from an event to the wake-up must be a thread wake-up and nothing more.
final class InotifyReader: Sendable {
    /// Large enough for hundreds of events per `read()`; the kernel needs at least one event with a maximal name.
    static let bufferSize = max(64 * 1024, InotifyEventDecoder.headerSize + Int(NAME_MAX) + 1)

    private let inotifyFD: Int32
    private let watchDescriptor: Int32
    /// Readable end of the wake-up pair; `wakeWriteFD` is written by `close()` and `injectOverflow()`.
    private let wakeReadFD: Int32
    private let wakeWriteFD: Int32
    private let wakeups: AsyncStream<Void>.Continuation
    private let state: Mutex<State>

    private struct State: ~Copyable {
        /// `close()` was called: the thread must stop and no further event may be read.
        var closing = false
        /// The descriptors are closed; checked under the lock before every use so a recycled descriptor number is
        /// never read or written.
        var descriptorsClosed = false
        /// The watch ended (`directoryGone` is queued): nothing more will come.
        var watchEnded = false
        /// `injectOverflow()` was called and the thread has not queued it yet. Several requests before the thread
        /// wakes are one rescan, so a flag is enough.
        var overflowRequested = false
        /// Read from the kernel, not yet taken.
        var queue: [SceneDirectoryEvent] = []
        let buffer: UnsafeMutableRawBufferPointer

        init() {
            buffer = UnsafeMutableRawBufferPointer.allocate(
                byteCount: InotifyReader.bufferSize, alignment: MemoryLayout<inotify_event>.alignment)
        }

        deinit { buffer.deallocate() }
    }

    init(
        inotifyFD: Int32,
        watchDescriptor: Int32,
        wakeReadFD: Int32,
        wakeWriteFD: Int32,
        wakeups: AsyncStream<Void>.Continuation
    ) {
        self.inotifyFD = inotifyFD
        self.watchDescriptor = watchDescriptor
        self.wakeReadFD = wakeReadFD
        self.wakeWriteFD = wakeWriteFD
        self.wakeups = wakeups
        self.state = Mutex(State())
    }

    /// Starts the reading thread. On failure the descriptors are closed and the stream finished, as if the thread
    /// had run and stopped.
    ///
    /// - Returns: `0`, or the error number of `pthread_create`.
    func start() -> Int32 {
        let result = PosixThread.detached(named: "ssd-inotify") { self.run() }
        if result != 0 { shutDown() }
        return result
    }

    /// Everything read so far plus everything the kernel holds now, in kernel order; empty when nothing is new.
    func take() -> [SceneDirectoryEvent] {
        state.withLock { state in
            if !state.descriptorsClosed, !state.watchEnded {
                readKernel(&state)
                // The thread may sleep in poll() with nothing left to read: wake it, so it sees the end and stops.
                if state.watchEnded { wake() }
            }
            defer { state.queue = [] }
            return state.queue
        }
    }

    /// Stops the thread and finishes the wake-ups; events still queued in the kernel are dropped.
    func close() {
        let first = state.withLock { state in
            guard !state.closing else { return false }
            state.closing = true
            if !state.descriptorsClosed { wake() }
            return true
        }
        // Outside the lock: finishing runs the stream's termination handler, which calls close() again.
        if first { wakeups.finish() }
    }

    /// Makes the thread queue `.overflow` after every event the kernel queued before this call.
    func injectOverflow() {
        state.withLock { state in
            guard !state.closing, !state.descriptorsClosed else { return }
            state.overflowRequested = true
            wake()
        }
    }

    /// Called with the lock held, so that the descriptor is still open.
    private func wake() {
        var byte: UInt8 = 1
        // A full pipe means the reader is already due to wake; nothing else can fail here.
        _ = write(wakeWriteFD, &byte, 1)
    }

    private func run() {
        defer { shutDown() }
        var descriptors = [
            pollfd(fd: inotifyFD, events: Int16(POLLIN), revents: 0),
            pollfd(fd: wakeReadFD, events: Int16(POLLIN), revents: 0),
        ]
        while true {
            guard poll(&descriptors, nfds_t(descriptors.count), -1) >= 0 else {
                if errno == EINTR { continue }
                return
            }
            if descriptors[1].revents != 0 { drainWakeUps() }
            let (stop, queued) = state.withLock { state -> (Bool, Bool) in
                if state.closing { return (true, false) }
                // Reading before queuing a requested overflow keeps it after every event that preceded the
                // request, as a real IN_Q_OVERFLOW would be.
                if descriptors[0].revents != 0 || state.overflowRequested { readKernel(&state) }
                if state.overflowRequested {
                    state.overflowRequested = false
                    state.queue.append(.overflow)
                }
                return (state.watchEnded, !state.queue.isEmpty)
            }
            if queued { wakeups.yield() }
            if stop || descriptors[0].revents & Int16(POLLERR | POLLHUP | POLLNVAL) != 0 { return }
        }
    }

    /// Reads until the kernel queue is empty, appending to the queue. Called with the lock held.
    private func readKernel(_ state: inout State) {
        while true {
            let count = read(inotifyFD, state.buffer.baseAddress, state.buffer.count)
            if count < 0 {
                let code = errno
                if code == EINTR { continue }
                if code != EAGAIN && code != EWOULDBLOCK { state.watchEnded = true }
                return
            }
            guard count > 0 else {
                state.watchEnded = true
                return
            }
            let (events, watchEnded) = InotifyEventDecoder.decode(
                UnsafeRawBufferPointer(rebasing: state.buffer[0..<count]),
                watchDescriptor: watchDescriptor
            )
            state.queue.append(contentsOf: events)
            if watchEnded {
                state.watchEnded = true
                return
            }
        }
    }

    private func drainWakeUps() {
        var bytes = (UInt64(0), UInt64(0), UInt64(0), UInt64(0))
        while read(wakeReadFD, &bytes, MemoryLayout.size(ofValue: bytes)) > 0 {}
    }

    /// Closes every descriptor exactly once and ends the wake-ups (a last one first, for what is still queued).
    private func shutDown() {
        state.withLock { state in
            guard !state.descriptorsClosed else { return }
            state.descriptorsClosed = true
            Glibc.close(inotifyFD)
            Glibc.close(wakeReadFD)
            Glibc.close(wakeWriteFD)
        }
        wakeups.yield()
        wakeups.finish()
    }
}
