import ArgumentParser
import SceneSyncClient

/// `scenesync sync`: returns once every scene-file change made before it has been merged, and prints the clock
/// then. A script that wrote a scene file runs it before reading the daemon's state.
struct SyncCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync",
        abstract: "Wait until every scene-file change made before now is merged; print the clock (EPOCH:REVISION).")

    @OptionGroup var global: GlobalOptions

    func run() async throws {
        if global.json {
            Output.json(try await global.withConnection { try await $0.send(.sync) })
        } else {
            Output.line(try await global.withConnection { try await $0.sync() }.description)
        }
    }
}
