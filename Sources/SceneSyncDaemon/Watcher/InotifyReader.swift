import Glibc
import Synchronization

/// The thread side of ``InotifyWatcher``: owns the inotify descriptor and the wake-up pipe, and feeds the stream.
///
/// A blocking thread rather than NIO or a polling task, because the only thing it waits for is the kernel, and the
/// latency from an event to the yield must be a thread wake-up and nothing more. It is a separate object from the
/// watcher so that the thread can keep it alive without keeping the public handle alive.
final class InotifyReader: Sendable {
    /// Large enough for hundreds of events per `read()`; the kernel needs at least one event with a maximal name.
    static let bufferSize = max(64 * 1024, InotifyEventDecoder.headerSize + Int(NAME_MAX) + 1)

    private let inotifyFD: Int32
    private let watchDescriptor: Int32
    /// Readable end of the wake-up pair; `wakeWriteFD` is written by `close()` and `injectOverflow()`.
    private let wakeReadFD: Int32
    private let wakeWriteFD: Int32
    private let continuation: AsyncStream<[SceneDirectoryEvent]>.Continuation
    private let state = Mutex(State())

    private struct State {
        /// `close()` was called: the thread must stop and no further event may be yielded.
        var closing = false
        /// The descriptors are closed; checked under the lock before every write so a recycled descriptor number
        /// is never written to.
        var descriptorsClosed = false
        /// `injectOverflow()` was called and the thread has not reported it yet. Several requests before the thread
        /// wakes are one rescan, so a flag is enough.
        var overflowRequested = false
    }

    init(
        inotifyFD: Int32,
        watchDescriptor: Int32,
        wakeReadFD: Int32,
        wakeWriteFD: Int32,
        continuation: AsyncStream<[SceneDirectoryEvent]>.Continuation
    ) {
        self.inotifyFD = inotifyFD
        self.watchDescriptor = watchDescriptor
        self.wakeReadFD = wakeReadFD
        self.wakeWriteFD = wakeWriteFD
        self.continuation = continuation
    }

    /// Starts the reading thread. On failure the descriptors are closed and the stream finished, as if the thread
    /// had run and stopped.
    ///
    /// - Returns: `0`, or the error number of `pthread_create`.
    func start() -> Int32 {
        let context = Unmanaged.passRetained(self).toOpaque()
        var thread = pthread_t()
        let result = pthread_create(
            &thread, nil,
            { context in
                guard let context else { return nil }
                Unmanaged<InotifyReader>.fromOpaque(context).takeRetainedValue().run()
                return nil
            }, context)
        guard result == 0 else {
            Unmanaged<InotifyReader>.fromOpaque(context).release()
            shutDown()
            return result
        }
        pthread_detach(thread)
        return 0
    }

    /// Stops the thread and finishes the stream; events still queued in the kernel are dropped.
    func close() {
        let first = state.withLock { state in
            guard !state.closing else { return false }
            state.closing = true
            if !state.descriptorsClosed { wake() }
            return true
        }
        // Outside the lock: finishing runs the stream's termination handler, which calls close() again.
        if first { continuation.finish() }
    }

    /// Makes the thread yield `.overflow` after every event the kernel queued before this call.
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
        let buffer = UnsafeMutableRawBufferPointer.allocate(
            byteCount: Self.bufferSize,
            alignment: MemoryLayout<inotify_event>.alignment
        )
        defer {
            buffer.deallocate()
            shutDown()
        }
        var descriptors = [
            pollfd(fd: inotifyFD, events: Int16(POLLIN), revents: 0),
            pollfd(fd: wakeReadFD, events: Int16(POLLIN), revents: 0),
        ]
        while true {
            guard poll(&descriptors, nfds_t(descriptors.count), -1) >= 0 else {
                if errno == EINTR { continue }
                return
            }
            var overflowRequested = false
            if descriptors[1].revents != 0 {
                drainWakeUps()
                let (closing, overflow) = state.withLock { state in
                    defer { state.overflowRequested = false }
                    return (state.closing, state.overflowRequested)
                }
                if closing { return }
                overflowRequested = overflow
            }
            // Draining inotify before yielding a requested overflow keeps it after every event that preceded the
            // request, as a real IN_Q_OVERFLOW would be.
            if descriptors[0].revents != 0 || overflowRequested {
                guard drainInotify(into: buffer) else { return }
            }
            if overflowRequested, !yield([.overflow]) { return }
            if descriptors[0].revents & Int16(POLLERR | POLLHUP | POLLNVAL) != 0 { return }
        }
    }

    /// Reads until the kernel queue is empty, yielding one batch per `read()`.
    ///
    /// - Returns: `false` when the thread must stop (the watch ended, the stream was terminated, or reading failed).
    private func drainInotify(into buffer: UnsafeMutableRawBufferPointer) -> Bool {
        while true {
            let count = read(inotifyFD, buffer.baseAddress, buffer.count)
            if count < 0 {
                let code = errno
                if code == EINTR { continue }
                return code == EAGAIN || code == EWOULDBLOCK
            }
            guard count > 0 else { return false }
            let (events, watchEnded) = InotifyEventDecoder.decode(
                UnsafeRawBufferPointer(rebasing: buffer[0..<count]),
                watchDescriptor: watchDescriptor
            )
            if !events.isEmpty, !yield(events) { return false }
            if watchEnded { return false }
        }
    }

    private func drainWakeUps() {
        var bytes = (UInt64(0), UInt64(0), UInt64(0), UInt64(0))
        while read(wakeReadFD, &bytes, MemoryLayout.size(ofValue: bytes)) > 0 {}
    }

    private func yield(_ events: [SceneDirectoryEvent]) -> Bool {
        if case .terminated = continuation.yield(events) { return false }
        return true
    }

    /// Closes every descriptor exactly once and ends the stream.
    private func shutDown() {
        state.withLock { state in
            guard !state.descriptorsClosed else { return }
            state.descriptorsClosed = true
            Glibc.close(inotifyFD)
            Glibc.close(wakeReadFD)
            Glibc.close(wakeWriteFD)
        }
        continuation.finish()
    }
}
