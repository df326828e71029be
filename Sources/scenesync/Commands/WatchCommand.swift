import ArgumentParser
import Dispatch
import SceneSyncClient
import SceneSyncCore

#if canImport(Glibc)
import Glibc
#endif

/// `scenesync watch [PATTERN…] [--since EPOCH:REVISION]`: what an operator keeps open.
///
/// Built on ``ResilientSubscription``, so it survives daemon restarts: it reconnects and resumes, and says so in a
/// `-- ` line; a restart without a clean shutdown shows as a resync with reason `epoch` followed by the current
/// state. Ctrl-C (SIGINT) or SIGTERM stops it cleanly with exit status 0.
struct WatchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Print scene changes as they happen; keeps going across daemon restarts.",
        discussion: """
            PATTERNs are shell globs over scene IDs (default: every scene). Without --since, the current state of \
            every matching scene is printed first. Lines starting with "--" are about the stream itself: synced \
            (caught up), resync (start over from the state that follows), disconnected and reconnected. With --json \
            every event is printed as received, one object per line, heartbeats included; disconnected and \
            reconnected are printed as {"event":"disconnected",...} and {"event":"reconnected",...} objects.
            """)

    @OptionGroup var global: GlobalOptions

    @Argument(help: ArgumentHelp("Scene ID globs to watch (default: all).", valueName: "PATTERN"))
    var patterns: [String] = []

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Resume after this clock instead of printing the current state.", valueName: "EPOCH:REVISION"),
        transform: { text in
            guard let clock = Clock(parsing: text), !clock.epoch.isEmpty else {
                throw ValidationError("--since must be EPOCH:REVISION, not \(text)")
            }
            return clock
        })
    var since: Clock?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Exit after this many scene events (state and change), for scripts; the lines about the stream do not "
                + "count.", valueName: "N"))
    var count: Int?

    func validate() throws {
        if patterns.contains(where: \.isEmpty) { throw ValidationError("a PATTERN must not be empty") }
        if let count, count < 1 { throw ValidationError("--count must be 1 or more") }
    }

    func run() async throws {
        let subscription = ResilientSubscription(
            socketPath: global.socketPath, patterns: patterns.isEmpty ? nil : patterns, since: since,
            clientName: "scenesync watch", waitsForDaemon: false)
        let json = global.json
        let limit = count
        let consumer = Task {
            var events = 0
            for try await received in subscription.received {
                if json {
                    Output.json(received.json)
                } else if let line = EventLine.text(received.event) {
                    Output.line(line)
                }
                switch received.event {
                case .state, .change: events += 1
                default: continue
                }
                if let limit, events >= limit { return }
            }
        }
        // Signals end the watch through task cancellation, so the connection is closed properly and the exit
        // status is 0.
        let signals = [SIGINT, SIGTERM].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { consumer.cancel() }
            source.resume()
            return source
        }
        defer { for source in signals { source.cancel() } }
        try await consumer.value
    }
}
