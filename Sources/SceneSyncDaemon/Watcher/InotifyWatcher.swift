import Glibc

/// Watches one scenes directory with inotify and delivers what changed as batches of ``SceneDirectoryEvent``.
///
/// Events come from a dedicated thread blocked in `poll()`, in kernel order, one batch per `read()`, into an unbounded
/// stream: the consumer is the daemon's single owner loop, and a dropped event would be a lost change, while
/// back-pressure would only move the loss into the kernel queue (where it becomes an overflow and a full rescan).
///
/// Only the final state of a file is reported: `IN_CLOSE_WRITE` and `IN_MOVED_TO`, never `IN_MODIFY`. So a writer
/// that writes a temp file and renames it over the scene file produces exactly one `.changed`, and so does one that
/// rewrites the file in place. Names `SceneID(fileName:)` rejects are dropped here, except `.scenesync-*` markers.
///
/// Dropping the last reference closes the watcher, so that a forgotten handle cannot leak a thread and two
/// descriptors: keep it for as long as ``events`` is consumed.
public final class InotifyWatcher: Sendable {
    /// The watched directory, as given.
    public let directory: String
    private let reader: InotifyReader
    private let stream: AsyncStream<[SceneDirectoryEvent]>

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
        let mask = UInt32(
            IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR
                | IN_EXCL_UNLINK
        )
        let watchDescriptor = inotify_add_watch(inotifyFD, directory, mask)
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

        let (stream, continuation) = AsyncStream.makeStream(
            of: [SceneDirectoryEvent].self,
            bufferingPolicy: .unbounded
        )
        let reader = InotifyReader(
            inotifyFD: inotifyFD,
            watchDescriptor: watchDescriptor,
            wakeReadFD: wake[0],
            wakeWriteFD: wake[1],
            continuation: continuation
        )
        // A consumer that stops iterating (its task cancelled) no longer needs the thread.
        continuation.onTermination = { _ in reader.close() }
        let result = reader.start()
        guard result == 0 else {
            throw .systemError(operation: "pthread_create", path: directory, errno: result)
        }
        self.directory = directory
        self.reader = reader
        self.stream = stream
    }

    deinit {
        reader.close()
    }

    /// The changes, in batches as the kernel delivered them. The stream finishes after ``close()``, after
    /// `.directoryGone`, or when its consumer is cancelled. It has one consumer: iterate it from one task only.
    public var events: AsyncStream<[SceneDirectoryEvent]> { stream }

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
