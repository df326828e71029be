import Foundation
import SceneSyncClient
import SceneSyncCore
import Testing

/// SPEC §10 "`routes` is also settable, for UI bindings": against the real daemon, a binding's values are written as
/// the edits they made, never as blind overwrites. Another window's, process's or file's acknowledged change always
/// stays in the scene, and a binding value that no longer applies is reported on `failures`, never silently lost.
@Suite struct ScenePathBindingTests {
    static let scene = "com.example.Recipes.window-1"

    /// The routes of a path that are recipes, in order.
    static func recipes(_ routes: [RecipeRoute]) -> [Int] {
        routes.compactMap {
            if case .recipe(let id) = $0 { return id }
            return nil
        }
    }

    /// The binding appends 100 recipes, five for each of the other writer's 20 `.settings`, so that the two
    /// interleave: burst k starts once the other writer's change k has `started` (it is then on its way, slowly when
    /// it is a process of its own) or has been acknowledged. `settingsWriter(k)` makes change k (from 0) and returns
    /// once it is acknowledged. `pause` spreads each burst, so that some values are set while a write of the binding
    /// is in flight and some while none is; only the interleaving depends on it, never the outcome.
    static func race(
        _ window: ScenePath<RecipeRoute>, burstsAfter gate: Gate, pause: Duration,
        against settingsWriter: @escaping @Sendable (Int) async throws -> Void
    ) async throws {
        let started = AsyncVariable(0)
        let acknowledged = AsyncVariable(0)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                for i in 0..<100 {
                    if i % 5 == 0 {
                        let counter = gate == .started ? started : acknowledged
                        let needed = gate == .started ? i / 5 + 1 : i / 5
                        _ = try await counter.wait(
                            for: "the other writer's change \(needed)", until: .now + .seconds(120)
                        ) {
                            $0 >= needed ? true : nil
                        }
                    }
                    // As `NavigationStack(path:)` does: read the path, set it with one more route.
                    window.routes.append(.recipe(i))
                    try await Task.sleep(for: pause)
                }
            }
            group.addTask {
                for k in 0..<20 {
                    started.update { $0 += 1 }
                    try await settingsWriter(k)
                    acknowledged.update { $0 += 1 }
                }
            }
            try await group.waitForAll()
        }
    }

    enum Gate {
        case started
        case acknowledged
    }

    /// After the race: every acknowledged `.settings` is in the scene, every value the binding set was written
    /// (none was reported dropped or failed), and the history shows only pushes on top of what was there.
    func checkNothingWasLost(
        _ daemon: DaemonProcess, _ window: ScenePath<RecipeRoute>, failures: Recorded<SceneSyncClientError>
    ) async throws {
        // The binding's writes end before this update, which changes nothing.
        try await window.update { _ in }
        let stored = try await daemon.routes(Self.scene)
        #expect(stored.filter { $0 == .settings }.count == 20, "an acknowledged change was lost: \(stored)")
        #expect(failures.values.isEmpty, "\(failures.values)")
        #expect(Self.recipes(stored) == Array(0..<100), "a value of the binding was lost: \(stored)")
        #expect(try SceneFile(scene: Self.scene, directory: daemon.scenes.path).read(as: RecipeRoute.self) == stored)
        #expect(await eventually { window.routes == stored }, "\(window.routes) vs \(stored)")

        // Every change only pushed on top of the one before it: none replaced what another writer had made.
        let history = try await daemon.history(Self.scene)
        let scene = try #require(try await daemon.currentScene(Self.scene))
        #expect(history.map(\.version) == Array(1...scene.version), "history is not whole")
        for (older, newer) in zip(history, history.dropFirst()) {
            let before = older.path ?? []
            let after = newer.path ?? []
            #expect(
                newer.conflict == nil && after.count > before.count && after.starts(with: before),
                "version \(newer.version) (\(newer.origin.client ?? "-")) replaced \(before) by \(after)")
        }
    }

    @Test func aBindingAppendingBesideAnotherWindowsUpdatesLosesNothing() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.cleanup() }
        try await daemon.start()
        let window = try await appSession(daemon, name: "binding").path(Self.scene, as: RecipeRoute.self)
        let failures = Recorded(window.failures)
        let other = try await appSession(daemon, name: "other").path(Self.scene, as: RecipeRoute.self)
        try await Self.race(window, burstsAfter: .acknowledged, pause: .milliseconds(1)) { _ in
            try await other.update { $0.append(.settings) }
        }
        try await checkNothingWasLost(daemon, window, failures: failures)
    }

    @Test func aBindingAppendingBesideAnotherProcessesPushesLosesNothing() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.cleanup() }
        try await daemon.start()
        let window = try await appSession(daemon, name: "binding").path(Self.scene, as: RecipeRoute.self)
        let failures = Recorded(window.failures)
        try await Self.race(window, burstsAfter: .started, pause: .milliseconds(10)) { k in
            let push = try await CLIProcess.run([
                "push", Self.scene, #"{"settings":{}}"#, "--type", RecipeRoute.tag, "--socket", daemon.socketPath,
            ])
            try #require(push.status == 0, "push \(k): \(push)")
        }
        try await checkNothingWasLost(daemon, window, failures: failures)
    }

    /// The binding pops to the root while another writer (an app rewriting the scene file in place) pushes above the
    /// part it popped: popping would remove that push, so the edit is dropped, the failure reported, and the newer
    /// path comes back in `routes` and on `changes`.
    @Test func aPopBelowAnotherWritersPushIsDroppedAndReported() async throws {
        // The daemon holds a client's change while an app has the file open, so the race is decided here.
        let daemon = try DaemonProcess(config: "scenes: {write_wait_ms: 30000}\n")
        defer { daemon.cleanup() }
        try await daemon.start()
        let window = try await appSession(daemon, name: "binding").path(Self.scene, as: RecipeRoute.self)
        try await window.update { $0 = [.recipe(1), .recipe(2)] }
        let version = window.version
        let failures = Recorded(window.failures)
        let changes = Recorded(window.changes)
        let observer = try await daemon.connect()
        let waits = try await observer.testCounter("writer_waits")

        // The app starts rewriting the file with a push of its own: [recipe 1, recipe 2, settings].
        let tag = RecipeRoute.tag
        let appContent =
            #"["\#(tag)","{\"settings\":{}}","\#(tag)","{\"recipe\":{\"_0\":2}}","\#(tag)","{\"recipe\":{\"_0\":1}}"]"#
        let (fd, rest) = try FaultSlowWriterTests.startWriting(daemon, Self.scene, appContent)
        window.routes = []
        #expect(window.routes.isEmpty, "the binding's value did not show at once")
        // The binding's write waits for the app's file; then the app finishes it.
        try await observer.waitForTestCounter("writer_waits", above: waits)
        FaultSlowWriterTests.finishWriting(fd, rest)

        let newer: [RecipeRoute] = [.recipe(1), .recipe(2), .settings]
        let dropped = try await failures.first(.writeDropped)
        #expect(dropped.message.contains("popping 2"), "\(dropped)")
        try await changes.wait(for: "the newer path on changes") { $0.last == newer }
        #expect(await eventually { window.routes == newer }, "\(window.routes)")
        #expect(failures.values.map(\.code) == [.writeDropped], "\(failures.values)")

        // The app's push stays: in the daemon, in the file byte for byte, and the history has no pop after it.
        #expect(try await daemon.routes(Self.scene) == newer)
        #expect(daemon.readScene(Self.scene) == appContent)
        let last = try #require(try await daemon.history(Self.scene).last)
        #expect(last.origin.source == .file && last.version == version + 1, "\(last)")
        // The mirror writes on top of the newer path again.
        window.routes.append(.recipe(3))
        try await window.update { _ in }
        #expect(try await daemon.routes(Self.scene) == newer + [.recipe(3)])
    }
}
