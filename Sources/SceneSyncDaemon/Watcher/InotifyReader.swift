import Glibc
import NIOCore
import NIOPosix
import Synchronization

/// The reading side of ``InotifyWatcher``: owns the inotify descriptor and the queue of events read but not yet
/// taken.
///
/// Reading happens under one lock, from the event loop when the kernel has events, or from ``take()`` when the engine
/// wants everything the kernel holds right now (before it decides a client's change). Because every read appends to
/// the one queue and every take empties it from the front, events are taken exactly once and in kernel order,
/// whoever read them. The loop only announces that the queue is not empty; it never hands events over itself.
///
/// The descriptor is watched by the engine's own event loop (a NIO pipe channel on a duplicate of it), not by a
/// thread of its own: the engine's writes to the scenes directory queue their own events, which the loop then finds
/// ready when its turn ends, in the same wake-up, where a thread blocked in `poll()` was woken for each of them. An
/// app's write wakes the loop once, and the engine reads the file in that same turn.
final class InotifyReader: Sendable {
    /// Large enough for hundreds of events per `read()`; the kernel needs at least one event with a maximal name.
    static let bufferSize = max(64 * 1024, InotifyEventDecoder.headerSize + Int(NAME_MAX) + 1)

    private let inotifyFD: Int32
    private let watchDescriptor: Int32
    let eventLoop: any EventLoop
    private let wakeups: AsyncStream<Void>.Continuation
    /// Called on the loop instead of a wake-up when events are queued, once the engine on the same loop plugged it
    /// in (``deliver(to:)``): it then takes them in the same turn, without a task to resume.
    private let handler: NIOLoopBoundBox<(() -> Void)?>
    private let state: Mutex<State>

    private struct State: ~Copyable {
        /// `close()` was called: no further event may be read.
        var closing = false
        /// The descriptor is closed; checked under the lock before every use so a recycled descriptor number is
        /// never read.
        var descriptorClosed = false
        /// The watch ended (`directoryGone` is queued): nothing more will come.
        var watchEnded = false
        /// ``injectOverflow()`` was called and the loop has not queued it yet: several requests meanwhile are one
        /// rescan.
        var overflowRequested = false
        /// The channel that watches the duplicate descriptor, once it is registered.
        var channel: (any Channel)? = nil
        /// Read from the kernel, not yet taken.
        var queue: [SceneDirectoryEvent] = []
        let buffer: UnsafeMutableRawBufferPointer

        init() {
            buffer = UnsafeMutableRawBufferPointer.allocate(
                byteCount: InotifyReader.bufferSize, alignment: MemoryLayout<inotify_event>.alignment)
        }

        deinit { buffer.deallocate() }
    }

    init(inotifyFD: Int32, watchDescriptor: Int32, eventLoop: any EventLoop, wakeups: AsyncStream<Void>.Continuation) {
        self.inotifyFD = inotifyFD
        self.watchDescriptor = watchDescriptor
        self.eventLoop = eventLoop
        self.wakeups = wakeups
        self.handler = NIOLoopBoundBox.makeEmptyBox(valueType: (() -> Void).self, eventLoop: eventLoop)
        self.state = Mutex(State())
    }

    /// From now on, queued events are announced by calling `handler` on the loop rather than on the wake-ups,
    /// which still end with the watch. Call it on the loop.
    func deliver(to handler: @escaping () -> Void) {
        self.handler.value = handler
    }

    /// Says, on the loop, that events are queued.
    private func announce() {
        if let handler = handler.value {
            handler()
        } else {
            wakeups.yield()
        }
    }

    /// Has the event loop watch the descriptor. The watch itself exists already, so nothing is missed while the
    /// channel is registered: what the kernel queued meanwhile is read when it is. On failure the descriptor is
    /// closed and the stream finished, as if the watch had ended.
    ///
    /// - Returns: `0`, or the error number of `dup`.
    func start() -> Int32 {
        let watched = fcntl(inotifyFD, F_DUPFD_CLOEXEC, 0)
        guard watched >= 0 else {
            let code = errno
            shutDown()
            return code
        }
        NIOPipeBootstrap(group: eventLoop)
            .channelOption(.recvAllocator, value: FixedSizeRecvByteBufferAllocator(capacity: Self.bufferSize))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(ReadinessHandler(reader: self))
                }
            }
            .takingOwnershipOfDescriptor(input: watched)
            .whenComplete { result in
                switch result {
                case .success(let channel):
                    let closing = self.state.withLock { state in
                        state.channel = channel
                        return state.closing || state.descriptorClosed
                    }
                    if closing { channel.close(promise: nil) }
                case .failure:
                    // NIO closed the duplicate; without a channel nothing announces events: the watch is over.
                    self.shutDown()
                }
            }
        return 0
    }

    /// Everything read so far plus everything the kernel holds now, in kernel order; empty when nothing is new.
    func take() -> [SceneDirectoryEvent] {
        let (events, ended) = state.withLock { state -> ([SceneDirectoryEvent], Bool) in
            var ended = false
            if !state.descriptorClosed, !state.watchEnded {
                readKernel(&state)
                ended = state.watchEnded
            }
            defer { state.queue = [] }
            return (state.queue, ended)
        }
        // The end of the watch was read here: nothing more will come, so the stream ends after this batch.
        if ended { shutDown() }
        return events
    }

    /// What was read and not taken yet, without reading the kernel: for a consumer the loop just announced events
    /// to, in the turn that read them (a read that left room in its buffer took all the kernel held).
    func takeRead() -> [SceneDirectoryEvent] {
        state.withLock { state in
            defer { state.queue = [] }
            return state.queue
        }
    }

    /// ``take()`` on the loop, from anywhere: a take on another thread could come between the loop's read of some
    /// events and their queueing, and return later events first. Empty once the loop is gone.
    func takeOnLoop() async -> [SceneDirectoryEvent] {
        if eventLoop.inEventLoop { return take() }
        return (try? await eventLoop.submit { self.take() }.get()) ?? []
    }

    /// Stops watching and finishes the wake-ups; events still queued in the kernel are dropped.
    func close() {
        let first = state.withLock { state in
            guard !state.closing else { return false }
            state.closing = true
            return true
        }
        // Outside the lock: finishing runs the stream's termination handler, which calls close() again.
        if first { shutDown() }
    }

    /// Queues `.overflow` after every event the kernel queued before this call, on the loop, as a real
    /// `IN_Q_OVERFLOW` would be.
    func injectOverflow() {
        let first = state.withLock { state in
            defer { state.overflowRequested = true }
            return !state.overflowRequested
        }
        guard first else { return }
        eventLoop.execute {
            let queued = self.state.withLock { state -> Bool in
                state.overflowRequested = false
                guard !state.closing, !state.descriptorClosed, !state.watchEnded else { return false }
                // Reading first keeps it after every event that preceded the request.
                self.readKernel(&state)
                state.queue.append(.overflow)
                return true
            }
            if queued { self.announce() }
        }
    }

    /// The loop found the descriptor readable and read `bytes` from it.
    fileprivate func received(_ bytes: ByteBuffer) {
        let (queued, ended) = state.withLock { state -> (Bool, Bool) in
            guard !state.closing, !state.descriptorClosed, !state.watchEnded else { return (false, false) }
            let (events, watchEnded) = bytes.withUnsafeReadableBytes { raw in
                InotifyEventDecoder.decode(raw, watchDescriptor: watchDescriptor)
            }
            state.queue.append(contentsOf: events)
            if watchEnded { state.watchEnded = true }
            return (!state.queue.isEmpty, watchEnded)
        }
        if queued { announce() }
        if ended { shutDown() }
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
            // The kernel hands over every event it holds that fits: a read with room for one more of the largest
            // took them all, so asking again would only return `EAGAIN`.
            if count <= state.buffer.count - Self.largestEvent { return }
        }
    }

    /// The most bytes one event takes: its header and the longest name.
    static let largestEvent = InotifyEventDecoder.headerSize + Int(NAME_MAX) + 1

    /// Closes the channel and the descriptor exactly once and ends the wake-ups (a last one first, for what is
    /// still queued).
    fileprivate func shutDown() {
        let channel = state.withLock { state -> (any Channel)?? in
            guard !state.descriptorClosed else { return .none }
            state.descriptorClosed = true
            Glibc.close(inotifyFD)
            defer { state.channel = nil }
            return .some(state.channel)
        }
        guard case .some(let channel) = channel else { return }
        channel?.close(promise: nil)
        wakeups.yield()
        wakeups.finish()
    }
}

/// Hands what the loop reads from the inotify descriptor to its reader; an error or the end of the channel ends
/// the watch.
private final class ReadinessHandler: ChannelInboundHandler, Sendable {
    typealias InboundIn = ByteBuffer
    let reader: InotifyReader

    init(reader: InotifyReader) {
        self.reader = reader
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        reader.received(unwrapInboundIn(data))
    }

    func channelInactive(context: ChannelHandlerContext) {
        reader.shutDown()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}
