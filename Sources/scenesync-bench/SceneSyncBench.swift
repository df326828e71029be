import ArgumentParser

/// `scenesync-bench <scenario>`: one subcommand per scenario, `all` for every one in turn.
@main
struct SceneSyncBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scenesync-bench",
        abstract: "Benchmarks of scenesyncd, side by side with its peers (--peers).",
        discussion: """
            Each scenario starts its own scenesyncd on temp directories (scene files and socket on a tmpfs, the \
            state directory on $TMPDIR) and prints a table, or one JSON object per result with --json. With \
            --peers it also starts redis-server, watchman and a raw inotify relay on private sockets, drives them \
            with the same clients and prints a table of ratios (scenesync/peer) beside the absolute figures.
            """,
        subcommands: [
            AllCommand.self, CoreCommand.self, FileLatencyCommand.self, FanoutCommand.self, ScaleCommand.self,
            SlowSubscriberCommand.self, InotifyRelayCommand.self, ClusterCommand.self,
        ]
    )
}
