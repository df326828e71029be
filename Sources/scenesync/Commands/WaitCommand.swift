import ArgumentParser
import Dispatch
import SceneSyncClient
import SceneSyncCore

/// `scenesync wait SCENE --version N [--timeout SECONDS]`: returns once the scene is at version N or later, for
/// scripts that must not race the daemon (start an app, then wait for its first save).
struct WaitCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "wait",
        abstract: "Wait until a scene reaches a version; print the scene's version then.",
        discussion: """
            Returns at once when the scene is already at VERSION or later. Exit status 4 when --timeout passes \
            first; a scene that does not exist counts as version 0 until it is created.
            """)

    @OptionGroup var global: GlobalOptions

    @Argument(help: "The scene ID.")
    var scene: String

    @Option(name: .long, help: ArgumentHelp("The version to wait for.", valueName: "N"))
    var version: UInt64

    @Option(
        name: .long,
        help: ArgumentHelp("Give up after this many seconds (default: wait for ever).", valueName: "SECONDS"))
    var timeout: Double?

    func validate() throws {
        if let timeout, !(timeout >= 0 && timeout.isFinite) {
            throw ValidationError("--timeout must be a number of seconds, 0 or more")
        }
    }

    func run() async throws {
        let scene = self.scene
        let target = version
        let wait = Task {
            try await global.withConnection { connection -> UInt64? in
                let subscription = try await connection.subscribe(patterns: [scene])
                var current: UInt64 = 0
                for try await event in subscription {
                    switch event {
                    case .state(let state) where state.id.rawValue == scene: current = state.version
                    case .change(let record) where record.scene.rawValue == scene:
                        current = record.kind == .delete ? 0 : record.version
                    default: continue
                    }
                    if current >= target { return current }
                }
                return nil
            }
        }
        var timer: Task<Void, Never>? = nil
        if let timeout {
            timer = Task {
                // Sleep throws only when cancelled, i.e. the wait already ended: there is nothing left to time out.
                guard (try? await Task.sleep(for: .seconds(timeout))) != nil else { return }
                wait.cancel()
            }
        }
        defer { timer?.cancel() }
        let reached: UInt64?
        do {
            reached = try await wait.value
        } catch is CancellationError {
            reached = nil
        }
        guard let reached else {
            throw WaitTimedOut(scene: scene, version: target, seconds: timeout ?? 0)
        }
        if global.json {
            Output.json(.object(JSONObject([("scene", .string(scene)), ("version", .number(JSONNumber(reached)))])))
        } else {
            Output.line("\(scene) v\(reached)")
        }
    }
}

/// `wait` gave up: exit status 4.
struct WaitTimedOut: Error, CustomStringConvertible {
    var scene: String
    var version: UInt64
    var seconds: Double

    var description: String { "\(scene) did not reach version \(version) within \(seconds) s" }
}
