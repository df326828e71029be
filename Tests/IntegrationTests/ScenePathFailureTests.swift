import Foundation
import SceneSyncClient
import SceneSyncCore
import Testing

/// SPEC §10 `changes` and `failures`: a daemon that stays away longer than the session's request deadline, and a
/// binding write that fails meanwhile, are reported on `failures`; `changes` neither throws nor ends for them, and the
/// same sequence goes on with the changes made once the daemon is back.
@Suite struct ScenePathFailureTests {
    static let scene = "com.example.Recipes.window-1"
    /// Short, so that an outage outlasts it in seconds, yet long enough that every request of the test fits in it
    /// while the whole suite runs on two cores: 4 s was once too short for an `update` after the restart.
    static let requestTimeout = Duration.seconds(8)

    /// The daemon stops for longer than the request deadline and starts again: `failures` says so once, and the
    /// `changes` sequence opened before the outage yields a change made after it.
    @Test func changesGoesOnAfterAnOutageLongerThanTheDeadline() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.cleanup() }
        try await daemon.start()
        let session = appSession(daemon, name: "window", requestTimeout: Self.requestTimeout)
        let path = try await session.path(Self.scene, as: RecipeRoute.self)
        try await path.update { $0 = [.recipe(1)] }
        let changes = Recorded(path.changes)
        let failures = Recorded(path.failures)

        #expect(try await daemon.stop() == 0)
        let outage = try await failures.first(.timedOut)
        #expect(outage.message.contains(daemon.socketPath), "\(outage)")
        #expect(changes.values.isEmpty, "an outage is not a change: \(changes.values)")

        try await daemon.start()
        try await appSession(daemon, name: "other").path(Self.scene, as: RecipeRoute.self).update {
            $0.append(.settings)
        }
        try await changes.wait(for: "the change made after the restart") { $0.last == [.recipe(1), .settings] }
        #expect(path.routes == [.recipe(1), .settings])
        #expect(failures.values.map(\.code) == [.timedOut], "one failure per outage: \(failures.values)")
        // The mirror writes again too.
        try await path.update { $0.append(.recipe(2)) }
        #expect(try await daemon.routes(Self.scene) == [.recipe(1), .settings, .recipe(2)])
    }

    /// A value set through the binding while no daemon answers is not written: `failures` reports it once the
    /// deadline passes, the daemon's path comes back in `routes` and on `changes`, and `changes` goes on after.
    @Test func aBindingWriteThatFailsInAnOutageIsReportedAndChangesGoesOn() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.cleanup() }
        try await daemon.start()
        let session = appSession(daemon, name: "window", requestTimeout: Self.requestTimeout)
        let path = try await session.path(Self.scene, as: RecipeRoute.self)
        try await path.update { $0 = [.recipe(1)] }
        let changes = Recorded(path.changes)
        let failures = Recorded(path.failures)

        #expect(try await daemon.stop() == 0)
        // The outage is reported first (once per outage), so the next failure is the binding's write.
        try await failures.first(.timedOut)
        path.routes = [.recipe(1), .recipe(2)]
        #expect(path.routes == [.recipe(1), .recipe(2)], "the binding's value did not show at once")
        try await failures.wait(for: "the binding's failed write") { $0.count >= 2 }
        let failedWrite = failures.values[1]
        #expect([.timedOut, .writeFailed].contains(failedWrite.code), "\(failedWrite)")
        #expect(await eventually { path.routes == [.recipe(1)] }, "the daemon's path did not come back: \(path.routes)")
        try await changes.wait(for: "the daemon's path back on changes") { $0.last == [.recipe(1)] }

        try await daemon.start()
        try await appSession(daemon, name: "other").path(Self.scene, as: RecipeRoute.self).update {
            $0.append(.settings)
        }
        try await changes.wait(for: "the change made after the restart") { $0.last == [.recipe(1), .settings] }
        #expect(path.routes == [.recipe(1), .settings])
        // The failed value was never written, not even once the daemon was back.
        try await path.update { _ in }
        #expect(try await daemon.routes(Self.scene) == [.recipe(1), .settings])
        #expect(failures.values.count == 2, "\(failures.values)")
    }
}
