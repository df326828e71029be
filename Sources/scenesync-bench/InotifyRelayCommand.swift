import ArgumentParser

/// `scenesync-bench inotify-relay`: the raw inotify relay peer, run by the bench as a child process (hidden).
struct InotifyRelayCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inotify-relay",
        abstract: "The raw inotify relay peer of file-latency (started by the bench itself).",
        shouldDisplay: false)

    @Option(help: ArgumentHelp("The directory to watch.", valueName: "dir"))
    var directory: String

    @Option(help: ArgumentHelp("The Unix socket to listen on.", valueName: "path"))
    var socket: String

    func run() throws {
        try InotifyRelay(directory: directory, socketPath: socket).run()
    }
}
