import Foundation
import SceneSyncClient
import SceneSyncCore
import SceneSyncTestKit
import Testing

/// SPEC §10 on the desktop: launch code and toolkit callbacks without an async context open a path and list scenes
/// with blocking calls on their own thread (a GTK main loop's), which end at their timeout when no daemon answers;
/// a window being shown reports its phase without waiting.
@Suite struct SessionBlockingTests {
    static let scene = "com.example.Recipes.window-1"

    /// What the launch code got, from its own thread.
    struct Launch: Sendable {
        var ids: [String]
        var routes: [RecipeRoute]
        var policyRoutes: [RecipeRoute]
        var skipped: [SkippedRoute]
    }

    @Test func theBlockingOpenAndListWorkFromAThreadOfTheirOwn() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.cleanup() }
        let tag = RecipeRoute.tag
        try daemon.writeScene(Self.scene, #"["\#(tag)","{\"recipe\":{\"_0\":3}}"]"#)
        // A window an older version of the app left, with a route case this one no longer has.
        try daemon.writeScene(
            "com.example.Recipes.window-2", #"["\#(tag)","{\"timer\":{}}","\#(tag)","{\"settings\":{}}"]"#)
        try daemon.writeScene("com.example.Other.window-1", "[]")
        try await daemon.start()
        let session = appSession(daemon, name: "desktop")
        // Not a thread of the cooperative pool: a toolkit's main thread, which may block.
        let launch = try await onThreadOfItsOwn(named: "main-loop") {
            let ids = try session.sceneIDs(matching: "com.example.Recipes.*", timeout: .seconds(60))
            let path = try session.path(Self.scene, as: RecipeRoute.self, timeout: .seconds(60))
            let older = try session.path(
                "com.example.Recipes.window-2", as: RecipeRoute.self, undecodable: .keepPrefix, timeout: .seconds(60))
            return Launch(ids: ids, routes: path.routes, policyRoutes: older.routes, skipped: older.skipped)
        }
        #expect(launch.ids == [Self.scene, "com.example.Recipes.window-2"])
        #expect(launch.routes == [.recipe(3)])
        #expect(launch.policyRoutes == [.settings] && launch.skipped.map(\.position) == [1], "\(launch.skipped)")

        // The path opened there is live: it follows a change made afterwards.
        let path = try await session.path(Self.scene, as: RecipeRoute.self)
        try await appSession(daemon, name: "other").path(Self.scene, as: RecipeRoute.self).update {
            $0.append(.settings)
        }
        #expect(await eventually { path.routes == [.recipe(3), .settings] }, "\(path.routes)")
    }

    /// A socket that accepts connections (the kernel's backlog) but never answers: a daemon that hangs.
    struct SilentSocket {
        let fd: Int32

        init(path: String) throws {
            fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            let bound = UnixSocketAddress.with(path) { bind(fd, $0, $1) }
            guard fd >= 0, bound == 0, listen(fd, 64) == 0 else {
                throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
            }
        }

        func close() { _ = Glibc.close(fd) }
    }

    /// What a blocking call did: its error, and how long it blocked.
    struct Blocked: Sendable {
        var error: SceneSyncClientError?
        var other: String?
        var elapsed: Duration
    }

    @Test func theBlockingCallsEndAtTheirTimeoutWhenNoDaemonAnswers() async throws {
        let directory = try TemporaryDirectory("ssbl")
        defer { directory.remove() }
        let socketPath = directory.appending("hung.sock").path
        let silent = try SilentSocket(path: socketPath)
        defer { silent.close() }
        // The session's own deadline is far away: only the calls' timeout can end them in time.
        let session = SceneSyncSession(socketPath: socketPath, requestTimeout: .seconds(120))
        defer { session.close() }
        let timeout = Duration.milliseconds(500)
        let calls: [(String, @Sendable () throws -> Void)] = [
            ("path", { _ = try session.path(Self.scene, as: RecipeRoute.self, timeout: timeout) }),
            ("sceneIDs", { _ = try session.sceneIDs(matching: "*", timeout: timeout) }),
        ]
        for (name, call) in calls {
            let blocked = try await onThreadOfItsOwn(named: "main-loop") {
                let start = ContinuousClock.now
                var outcome = Blocked(elapsed: .zero)
                do {
                    try call()
                } catch let error as SceneSyncClientError {
                    outcome.error = error
                } catch {
                    outcome.other = "\(error)"
                }
                outcome.elapsed = ContinuousClock.now - start
                return outcome
            }
            #expect(blocked.error?.code == .timedOut, "\(name): \(blocked)")
            #expect(blocked.other == nil, "\(name): \(blocked)")
            #expect(blocked.elapsed >= timeout, "\(name) returned before its timeout: \(blocked.elapsed)")
            #expect(blocked.elapsed < .seconds(60), "\(name) waited for the session's deadline: \(blocked.elapsed)")
        }
    }

    @Test func reportPhaseReachesTheDaemonWithoutWaiting() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.cleanup() }
        try await daemon.start()
        let watcher = try await daemon.connect()
        try await watcher.subscribe([Self.scene])
        _ = try await watcher.events(until: "synced")
        let session = appSession(daemon, name: "desktop")
        let completed = AsyncVariable<Result<SnapshotInfo?, any Error>?>(nil)
        // A window is shown: a synchronous callback, which returns at once.
        session.reportPhase(.active, scene: Self.scene) { result in completed.update { $0 = result } }

        let event = try await watcher.nextEvent()
        #expect(event.eventName == "phase", "\(event.text)")
        #expect(event["scene"]?.stringValue == Self.scene && event["phase"]?.stringValue == "active", "\(event.text)")
        let result = try await completed.wait(for: "the report's completion", until: .now + .seconds(60)) { $0 }
        switch result {
        case .success(let snapshot): #expect(snapshot == nil, "an active phase wrote a snapshot")
        case .failure(let error): Issue.record("the report failed: \(error)")
        }
    }
}
