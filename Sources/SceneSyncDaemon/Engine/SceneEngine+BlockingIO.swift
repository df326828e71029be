extension SceneEngine {
    /// The engine's blocking executor, for the replicator's own blocking calls (the cluster journal's writes):
    /// one executor for the whole process, so a busy disk is shared, never fought over by a second pool.
    package nonisolated var blockingIO: BlockingIO { io }
}
