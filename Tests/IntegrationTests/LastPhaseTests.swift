import Foundation
import SceneSyncClient
import SceneSyncCore
import Testing

/// SPEC §10 `lastPhase` (with §6's per-scene `phase`): a mirror tells how the window it restores was left, as the
/// daemon held it when the mirror opened: `.background` after a clean close, `.active` when the process showing it
/// died without reporting the background phase (also across a snapshot and a crash of the daemon), nil when no phase
/// was ever reported; and it keeps that value whatever is reported later.
@Suite struct LastPhaseTests {
    static let scene = "com.example.Recipes.window-1"

    /// A new session's mirror of the scene, as the next launch of the app opens it.
    func reopen(_ daemon: DaemonProcess) async throws -> ScenePath<RecipeRoute> {
        try await appSession(daemon, name: "next-launch").path(Self.scene, as: RecipeRoute.self)
    }

    /// Reports `phase` for the scene with the CLI, as another process would; returns once the daemon answered.
    func report(_ phase: ScenePhase, _ daemon: DaemonProcess, scene: String = scene) async throws {
        let result = try await CLIProcess.run(["phase", scene, phase.rawValue, "--socket", daemon.socketPath])
        try #require(result.status == 0, "\(result)")
    }

    @Test func aSceneClosedCleanlyWasInTheBackground() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.cleanup() }
        try await daemon.start()
        let session = appSession(daemon, name: "app")
        let path = try await session.path(Self.scene, as: RecipeRoute.self)
        try await path.update { $0 = [.recipe(1)] }
        try await session.phase(.active, scene: Self.scene)
        // The window closes.
        try await session.phase(.background, scene: Self.scene)
        session.close()
        #expect(try await reopen(daemon).lastPhase == .background)
    }

    @Test func aSceneNeverReportedHasNoPhase() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.cleanup() }
        try daemon.writeScene(Self.scene, #"["\#(RecipeRoute.tag)","{\"settings\":{}}"]"#)
        try await daemon.start()
        let path = try await reopen(daemon)
        #expect(path.routes == [.settings])
        #expect(path.lastPhase == nil)
        // A scene that does not exist yet has none either.
        let empty = try await appSession(daemon, name: "app").path("com.example.Recipes.new", as: RecipeRoute.self)
        #expect(empty.lastPhase == nil)
    }

    /// The example app shows a window, which is reported active, and is killed: it never reported the background
    /// phase, so the next launch finds the window was still showing.
    @Test func aSceneWhoseProcessWasKilledWasActive() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.cleanup() }
        try await daemon.start()
        // Its standard input stays open: at the end of its input it would quit, cleanly.
        let app = try ExampleAppTests.App(daemon)
        defer { app.process.cleanup() }
        // `window 1 com.example.Recipes.window-…: (root)`
        let opened = try #require(try await app.lines(untilPrefix: "window 1 ").last)
        let scene = try #require(opened.split(separator: " ").dropFirst(2).first.map { String($0.dropLast()) })
        try app.type("push 1 recipe 42")
        try await app.lines(untilPrefix: "window 1: recipe 42")
        try await report(.active, daemon, scene: scene)
        app.process.signal(SIGKILL)
        #expect(try await app.process.termination(timeout: .seconds(60)) == .signaled(SIGKILL))

        // The next launch (another app's routes, so it starts the window at its root) finds it was showing.
        let path = try await appSession(daemon, name: "next-launch").path(
            scene, as: RecipeRoute.self, undecodable: .startAtRoot)
        #expect(path.lastPhase == .active)
        #expect(path.routes.isEmpty && path.skipped.map(\.tag) == ["recipe_windows.Route"], "\(path.skipped)")
    }

    /// The daemon keeps the phase in its snapshot: reported active, snapshotted, the daemon killed and started
    /// again from that snapshot, the scene was still active.
    @Test func theActivePhaseSurvivesASnapshotAndACrashOfTheDaemon() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.cleanup() }
        try daemon.writeScene(Self.scene, #"["\#(RecipeRoute.tag)","{\"settings\":{}}"]"#)
        try await daemon.start()
        try await report(.active, daemon)
        let snapshot = try await CLIProcess.run(["snapshot", "--socket", daemon.socketPath])
        try #require(snapshot.status == 0, "\(snapshot)")
        #expect(try await daemon.stopped(SIGKILL) == .signaled(SIGKILL))
        try await daemon.start()
        #expect(try await reopen(daemon).lastPhase == .active)
    }

    /// `lastPhase` is how the scene was left when the mirror opened: a phase reported afterwards (the app's own
    /// window being shown) does not change it, not even when the daemon restarts and the mirror reads the scene
    /// again.
    @Test func lastPhaseKeepsTheValueItOpenedWith() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.cleanup() }
        try daemon.writeScene(Self.scene, #"["\#(RecipeRoute.tag)","{\"settings\":{}}"]"#)
        try await daemon.start()
        try await report(.background, daemon)
        let path = try await reopen(daemon)
        #expect(path.lastPhase == .background)

        try await report(.active, daemon)
        let changes = Recorded(path.changes)
        try await appSession(daemon, name: "other").path(Self.scene, as: RecipeRoute.self).update {
            $0.append(.recipe(1))
        }
        try await changes.wait(for: "a change after the report") { $0.last == [.settings, .recipe(1)] }
        #expect(path.lastPhase == .background)

        // Killed after a snapshot that holds the active phase: the mirror resyncs and reads the scene's state again.
        let snapshot = try await CLIProcess.run(["snapshot", "--socket", daemon.socketPath])
        try #require(snapshot.status == 0, "\(snapshot)")
        _ = try await daemon.stopped(SIGKILL)
        try await daemon.start()
        try await appSession(daemon, name: "other").path(Self.scene, as: RecipeRoute.self).update {
            $0.append(.recipe(2))
        }
        try await changes.wait(for: "a change after the restart") { $0.last == [.settings, .recipe(1), .recipe(2)] }
        #expect(path.lastPhase == .background)
        #expect(try await reopen(daemon).lastPhase == .active, "the daemon did not keep the later report")
    }
}
