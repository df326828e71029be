extension EngineCore {
    /// The most files a pipeline step reads or writes on the engine's own thread; a bigger step goes to
    /// ``BlockingIO``.
    static let inlineFiles = 8
    /// The most bytes a pipeline step writes on the engine's own thread.
    static let inlineBytes = 256 * 1024

    /// Runs a pipeline step's file work, then `done` with its result: on the engine's thread when it is small, on
    /// the blocking executor when it is not.
    ///
    /// Reading or replacing a few small scene files (the scenes directory is a tmpfs by default, and a file just
    /// written is in the page cache anyway) takes a few microseconds, while a hand-off to another thread and back
    /// wakes two threads, which on a small VM costs more than the work: a change from a client or an app is then
    /// decided on one thread. Rescans, snapshots and reservations, which may be large or `fsync`, never run here.
    /// The step is the same either way: the pipeline runs one step at a time, and the engine only serves less in
    /// between.
    func fileStep<Result: Sendable>(
        files: Int, bytes: Int = 0, _ job: @escaping @Sendable () -> Result, then done: @escaping (Result) -> Void
    ) {
        guard isInline(files: files, bytes: bytes) else { return offload(job, then: done) }
        done(job())
    }

    /// Whether a step's file work is small enough for the engine's own thread.
    func isInline(files: Int, bytes: Int = 0) -> Bool {
        settings.inlinesSmallFileSteps && files <= EngineCore.inlineFiles && bytes <= EngineCore.inlineBytes
    }
}
