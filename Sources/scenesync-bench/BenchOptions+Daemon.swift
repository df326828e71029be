extension BenchOptions {
    /// Which scenesyncd a scenario drives: one it starts (found and built once, before the scenario), or one
    /// already running that it must not restart.
    struct Daemon {
        /// Use the daemon already listening here instead of starting one.
        var socket: String? = nil
        /// With `--socket`: the scenes directory of that daemon (`file-latency` writes there).
        var scenesDirectory: String? = nil
        /// The `scenesyncd` to start; default: the one beside this executable, built first.
        var executable: String? = nil
        /// Do not run `swift build` for `scenesyncd` before starting it.
        var build = true
    }
}
