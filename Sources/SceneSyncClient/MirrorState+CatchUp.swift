extension MirrorState {
    /// The whole state the daemon sends after a resync (or at the start), up to its `synced`: a scene without a
    /// `state` in it no longer exists, which only the `synced` can tell.
    struct CatchUp {
        var running = true
        var sawState = false
    }
}
