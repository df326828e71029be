/// What a scenario run is given: every scenario reads the settings it understands and uses its own defaults for
/// the ones not given (`nil`). The subcommands fill it from the command line.
struct BenchOptions {
    var json = false
    /// Scene counts (`core`: the store size; `scale`: one run per count; `file-latency`: the number of files).
    var scenes: [Int]? = nil
    var operations = 20_000
    var seed: UInt64 = 1
    /// Seconds per measured sub-run.
    var duration: Double? = nil
    /// Subscriber counts, one sub-run per count.
    var subscribers: [Int]? = nil
    /// Changes per second for the paced runs.
    var rate: Int? = nil
    /// Changes a saturating writer may be ahead of the slowest subscriber (flow control; below the queue limit).
    var window: Int? = nil
    /// Reader threads for the subscribers (default: one per 250 subscribers, at most 4).
    var threads: Int? = nil
    /// Use the daemon already listening here instead of starting one.
    var socket: String? = nil
    /// With `--socket`: the scenes directory of that daemon (`file-latency` writes there).
    var scenesDirectory: String? = nil
    /// The `scenesyncd` to start; default: the one beside this executable, built first.
    var daemon: String? = nil
    /// Do not run `swift build` for `scenesyncd` before starting it.
    var build = true
    /// Measure the scenario's peers in the same run and print ratios.
    var peers = false
    /// `file-latency`: where the scene files live, one sub-run each.
    var filesystems: [Filesystem] = [.tmpfs]
    /// `cluster`: the paced rates, one sub-run each.
    var rates: [Int]? = nil
    /// `cluster`: the changes of the unpaced burst whose convergence gives the changes/s.
    var burst: Int? = nil
}
