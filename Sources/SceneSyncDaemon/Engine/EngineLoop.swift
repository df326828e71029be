package import NIOCore
import NIOPosix

/// The one thread the engine and its connections run on: a NIO event loop of its own.
///
/// On this kind of machine a thread wake-up costs more than the work of a change, so the engine's state, the
/// control socket's channels and the tasks that serve them share one thread, as Redis's do: a request read from a
/// socket reaches the engine, and its answer and the events it causes reach the sockets, by jobs queued on the same
/// loop, never by waking another thread. The engine (``EngineCore``) lives on the loop and is called there; the
/// tasks that call it through its handle (``Engine``) prefer the loop as their task executor (``taskExecutor``), so
/// that handing it an input costs no thread hop either. What still crosses threads is what blocks: file I/O on
/// ``BlockingIO`` and the inotify reader.
package final class EngineLoop: Sendable {
    /// The thread, when the loop is the engine's own; `nil` for a loop a test drives (``init(driving:)``).
    private let group: MultiThreadedEventLoopGroup?
    /// The loop itself, for channels and timers.
    package let eventLoop: any EventLoop
    /// The loop as the executor that tasks prefer (`withTaskExecutorPreference`).
    package let taskExecutor: EventLoopTaskExecutor

    init() {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        self.group = group
        eventLoop = group.next()
        taskExecutor = EventLoopTaskExecutor(eventLoop)
    }

    /// On a loop the caller runs, with no thread of its own: a test's `EmbeddedEventLoop`, whose jobs and timers
    /// run only when the test says, so that a seeded schedule decides every interleaving of the real engine.
    init(driving eventLoop: any EventLoop) {
        group = nil
        self.eventLoop = eventLoop
        taskExecutor = EventLoopTaskExecutor(eventLoop)
    }

    /// The thread ends with the engine that owns it. Not a blocking shutdown: the last reference may be dropped on
    /// the loop itself.
    deinit {
        group?.shutdownGracefully { _ in }
    }
}

/// An event loop as a task executor: a task that prefers it runs its jobs on the loop's thread, between the loop's
/// I/O and timers. A job queued from the loop's own thread wakes nothing.
package final class EventLoopTaskExecutor: TaskExecutor {
    private let eventLoop: any EventLoop

    init(_ eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    package func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        eventLoop.execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
