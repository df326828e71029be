/// What a scenario run is given: every scenario reads the settings it understands and uses its own defaults for
/// the ones not given (`nil`). The subcommands fill it from the command line.
struct BenchOptions {
    var json = false
    /// Measure the scenario's peers in the same run and print ratios.
    var peers = false
    var daemon = Daemon()
    var load = Load()
    var store = Store()
    /// `file-latency`: where the scene files live, one sub-run each.
    var filesystems: [Filesystem] = [.tmpfs]
    var cluster = Cluster()
}
