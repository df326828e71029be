import Glibc
public import NIOCore
public import NIOPosix

/// Watches one scenes directory with inotify and delivers what changed as batches of ``SceneDirectoryEvent``.
///
/// An event loop reads events in kernel order into an unbounded queue when the descriptor is readable and announces
/// them on ``wakeups``; the consumer takes them with ``takeEvents()``, which also reads whatever the kernel holds at
/// that moment. So the daemon can catch up with every event that happened before a client's request, in order,
/// without waiting for the loop. The queue is unbounded because a dropped event would be a lost change, while back-pressure
/// would only move the loss into the kernel queue (where it becomes an overflow and a full rescan).
///
/// Content is final only at `IN_CLOSE_WRITE` and `IN_MOVED_TO` (`.changed`): a writer that renames a temp file over
/// the scene file produces exactly one, and so does one that rewrites the file in place. `IN_MODIFY` on a scene file
/// (`.modified`) only says that a writer holds it open with unfinished content, which must not be read yet (§3).
/// Names `SceneID(fileName:)` rejects are dropped here, except `.scenesync-*` markers.
///
/// Dropping the last reference closes the watcher, so that a forgotten handle cannot leak a channel and two
/// descriptors: keep it for as long as ``events`` is consumed.
public final class InotifyWatcher: Sendable {
    /// The watched directory, as given.
    public let directory: String
    private let reader: InotifyReader
    private let wakeupStream: AsyncStream<Void>

    /// What the watch asks the kernel for.
    static let watchMask = UInt32(
        IN_CLOSE_WRITE | IN_MODIFY | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | IN_DELETE_SELF | IN_MOVE_SELF
            | IN_ONLYDIR | IN_EXCL_UNLINK
    )

    /// Starts watching `directory`.
    ///
    /// The watch exists when this returns, so a change made afterwards is never missed; a change made before must be
    /// found by scanning the directory after creating the watcher.
    ///
    /// The loop it is watched on is the engine's in the daemon (see ``InotifyReader``), so that the engine takes the
    /// events without a thread hop; ``takeEvents()`` must be called on it.
    public convenience init(
        directory: String, eventLoop: any EventLoop = MultiThreadedEventLoopGroup.singleton.next()
    ) throws(WatcherError) {
        try self.init(directory: directory, eventLoop: eventLoop, readsOnlyWhenTaken: false)
    }

    /// `readsOnlyWhenTaken`: no channel watches the descriptor, so the kernel's events are read only by
    /// ``takeEvents()``, and no wake-up announces them. For a test that drives the engine on a loop with no I/O (an
    /// `EmbeddedEventLoop`): the engine still reads every event in kernel order where it drains the watcher, at the
    /// moments the test's schedule makes.
    init(directory: String, eventLoop: any EventLoop, readsOnlyWhenTaken: Bool) throws(WatcherError) {
        let inotifyFD = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard inotifyFD >= 0 else {
            let code = errno
            throw code == EMFILE
                ? .instanceLimitReached : .systemError(operation: "inotify_init1", path: directory, errno: code)
        }
        let watchDescriptor = inotify_add_watch(inotifyFD, directory, Self.watchMask)
        guard watchDescriptor >= 0 else {
            let code = errno
            Glibc.close(inotifyFD)
            throw .addWatch(path: directory, errno: code)
        }
        // One pending wake-up is enough: each one means "take everything queued".
        let (stream, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        let reader = InotifyReader(
            inotifyFD: inotifyFD, watchDescriptor: watchDescriptor, eventLoop: eventLoop, wakeups: continuation)
        // A consumer that stops iterating (its task cancelled) no longer needs the watch.
        continuation.onTermination = { _ in reader.close() }
        let result = readsOnlyWhenTaken ? 0 : reader.start()
        guard result == 0 else {
            throw .systemError(operation: "dup", path: directory, errno: result)
        }
        self.directory = directory
        self.reader = reader
        self.wakeupStream = stream
    }

    deinit {
        reader.close()
    }

    /// Says that events are queued: take them with ``takeEvents()``. Finishes after ``close()``, after
    /// `.directoryGone`, or when its consumer is cancelled. One consumer only.
    public var wakeups: AsyncStream<Void> { wakeupStream }

    /// Every event read so far, and every event the kernel holds now, in kernel order; empty when there is none.
    /// Whoever calls it takes the events: call it from one place (the engine) only, on the watcher's event loop,
    /// where what the loop reads is queued in the same order.
    public func takeEvents() -> [SceneDirectoryEvent] {
        reader.eventLoop.preconditionInEventLoop()
        return reader.take()
    }

    /// The events read so far and not taken, without asking the kernel for more: for the handler of
    /// ``deliver(to:)``, which the loop calls right after it read them. Call it on the loop.
    public func takeReadEvents() -> [SceneDirectoryEvent] {
        reader.eventLoop.preconditionInEventLoop()
        return reader.takeRead()
    }

    /// Has `handler` called on the watcher's loop whenever events are queued, instead of a wake-up on ``wakeups``
    /// (which still finishes when the watch ends): for a consumer on that same loop, which then takes them in the
    /// turn that read them. Call it on the loop.
    public func deliver(to handler: @escaping () -> Void) {
        reader.eventLoop.preconditionInEventLoop()
        reader.deliver(to: handler)
    }

    /// The loop the descriptor is watched on.
    public var eventLoop: any EventLoop { reader.eventLoop }

    /// The events as batches of ``takeEvents()``, one per wake-up that found any: for a consumer that only reads
    /// them in order (tests, tools). It ends when the watcher ends. Do not mix it with ``takeEvents()``.
    public var events: Events { Events(reader: reader, wakeups: wakeupStream) }

    /// Holds the reader, not the watcher: dropping the last handle still closes the watcher and ends the sequence.
    public struct Events: AsyncSequence, Sendable {
        public typealias Element = [SceneDirectoryEvent]
        let reader: InotifyReader
        let wakeups: AsyncStream<Void>

        public func makeAsyncIterator() -> AsyncIterator {
            AsyncIterator(reader: reader, wakeups: wakeups.makeAsyncIterator())
        }

        public struct AsyncIterator: AsyncIteratorProtocol {
            let reader: InotifyReader
            var wakeups: AsyncStream<Void>.AsyncIterator

            public mutating func next() async -> [SceneDirectoryEvent]? {
                while true {
                    let batch = await reader.takeOnLoop()
                    if !batch.isEmpty { return batch }
                    guard await wakeups.next() != nil else {
                        let last = await reader.takeOnLoop()
                        return last.isEmpty ? nil : last
                    }
                }
            }
        }
    }

    /// Stops watching: closes the channel and the descriptors and finishes ``events``. Safe to call more than once
    /// and from any thread; events still in the kernel queue are dropped.
    public func close() {
        reader.close()
    }

    /// For tests: makes the stream deliver `.overflow` after every event the kernel queued before this call, exactly
    /// as a real `IN_Q_OVERFLOW` would, so the daemon's rescan path can be exercised without flooding the kernel.
    /// Several calls before the loop gets to them yield one `.overflow`. Does nothing after ``close()``.
    public func injectOverflow() {
        reader.injectOverflow()
    }
}
