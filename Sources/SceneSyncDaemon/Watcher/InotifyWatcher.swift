import Glibc

/// Watches one scenes directory with inotify and delivers what changed as batches of ``SceneDirectoryEvent``.
///
/// A dedicated thread blocked in `poll()` reads events in kernel order into an unbounded queue and announces them on
/// ``wakeups``; the consumer takes them with ``takeEvents()``, which also reads whatever the kernel holds at that
/// moment. So the daemon can catch up with every event that happened before a client's request, in order, without
/// waiting for the thread. The queue is unbounded because a dropped event would be a lost change, while back-pressure
/// would only move the loss into the kernel queue (where it becomes an overflow and a full rescan).
///
/// Content is final only at `IN_CLOSE_WRITE` and `IN_MOVED_TO` (`.changed`): a writer that renames a temp file over
/// the scene file produces exactly one, and so does one that rewrites the file in place. `IN_MODIFY` on a scene file
/// (`.modified`) only says that a writer holds it open with unfinished content, which must not be read yet (§3).
/// Names `SceneID(fileName:)` rejects are dropped here, except `.scenesync-*` markers.
///
/// Dropping the last reference closes the watcher, so that a forgotten handle cannot leak a thread and two
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
    public init(directory: String) throws(WatcherError) {
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
        // A pipe for waking the thread. Glibc's Swift module exports neither eventfd nor pipe2, and the SOCK_*
        // constants a socketpair needs cannot be named reliably in this target: CSystemd's header includes
        // <sys/socket.h> too, and Swift then attributes them to whichever module it loaded first. The flags are set
        // right after creation; the daemon never executes other programs, so close-on-exec cannot race an exec.
        var wake: [Int32] = [-1, -1]
        guard pipe(&wake) == 0 else {
            let code = errno
            Glibc.close(inotifyFD)
            throw .systemError(operation: "pipe", path: directory, errno: code)
        }
        for descriptor in wake {
            _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
            _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
        }

        // One pending wake-up is enough: each one means "take everything queued".
        let (stream, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        let reader = InotifyReader(
            inotifyFD: inotifyFD,
            watchDescriptor: watchDescriptor,
            wakeReadFD: wake[0],
            wakeWriteFD: wake[1],
            wakeups: continuation
        )
        // A consumer that stops iterating (its task cancelled) no longer needs the thread.
        continuation.onTermination = { _ in reader.close() }
        let result = reader.start()
        guard result == 0 else {
            throw .systemError(operation: "pthread_create", path: directory, errno: result)
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
    /// Whoever calls it takes the events: call it from one place (the engine) only.
    public func takeEvents() -> [SceneDirectoryEvent] {
        reader.take()
    }

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
                    let batch = reader.take()
                    if !batch.isEmpty { return batch }
                    guard await wakeups.next() != nil else {
                        let last = reader.take()
                        return last.isEmpty ? nil : last
                    }
                }
            }
        }
    }

    /// Stops watching: wakes the thread, closes the descriptors and finishes ``events``. Safe to call more than once
    /// and from any thread; events still in the kernel queue are dropped.
    public func close() {
        reader.close()
    }

    /// For tests: makes the stream deliver `.overflow` after every event the kernel queued before this call, exactly
    /// as a real `IN_Q_OVERFLOW` would, so the daemon's rescan path can be exercised without flooding the kernel.
    /// Several calls before the thread wakes yield one `.overflow`. Does nothing after ``close()``.
    public func injectOverflow() {
        reader.injectOverflow()
    }
}
