import Foundation
import SceneSyncClient
import SceneSyncCore
import Testing

/// A route as an app declares one: at file scope, so that its qualified name is stable.
enum RecipeRoute: Codable, Sendable, Hashable {
    case recipe(Int)
    case settings
}

/// SPEC §10 against the real daemon: `SceneSyncSession`, `ScenePath` and `SceneFile` as an app uses them.
@Suite struct ScenePathTests {
    static let scene = "com.example.Recipes.window-1"
    static let quickBackoff = ReconnectBackoff(initial: .milliseconds(20), maximum: .milliseconds(200))

    func session(_ daemon: DaemonProcess, name: String = "recipes") -> SceneSyncSession {
        SceneSyncSession(socketPath: daemon.socketPath, clientName: name, backoff: Self.quickBackoff)
    }

    @Test func aNewSceneIsEmptyAndAnUpdateWritesItAsSwiftUIWould() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.cleanup() }
        try await daemon.start()
        let session = session(daemon)
        let path = try await session.path(Self.scene, as: RecipeRoute.self)
        #expect(path.routes.isEmpty && path.version == 0)

        try await path.update { $0 += [.recipe(7), .settings] }
        #expect(path.routes == [.recipe(7), .settings])
        #expect(path.version == 1)
        // Codable, top of the stack first, each item the sorted-keys JSON of the route, tagged like SwiftUI tags it.
        let tag = String(reflecting: RecipeRoute.self)
        #expect(tag == "IntegrationTests.RecipeRoute")
        #expect(
            daemon.readScene(Self.scene)
                == #"["\#(tag)","{\"settings\":{}}","\#(tag)","{\"recipe\":{\"_0\":7}}"]"#)
        // The file reads back through SceneFile, the way an app without a connection reads it.
        let file = SceneFile(scene: Self.scene, directory: daemon.scenes.path)
        #expect(try file.read(as: RecipeRoute.self) == [.recipe(7), .settings])
    }

    @Test func twoWindowsChangingOneSceneAtOnceLoseNothing() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.cleanup() }
        try await daemon.start()
        let first = try await session(daemon, name: "one").path(Self.scene, as: RecipeRoute.self)
        let second = try await session(daemon, name: "two").path(Self.scene, as: RecipeRoute.self)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { for i in 0..<25 { try await first.update { $0.append(.recipe(i)) } } }
            group.addTask { for i in 100..<125 { try await second.update { $0.append(.recipe(i)) } } }
            try await group.waitForAll()
        }
        let expected = Set((0..<25).map(RecipeRoute.recipe) + (100..<125).map(RecipeRoute.recipe))
        #expect(await eventually { Set(first.routes) == expected && Set(second.routes) == expected })
        #expect(first.routes.count == 50 && first.routes == second.routes)
        #expect(first.version == 50)
    }

    @Test func changesReportOtherWritersButNeverTheMirrorsOwnWrites() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.cleanup() }
        try await daemon.start()
        let path = try await session(daemon).path(Self.scene, as: RecipeRoute.self)
        let seen = Task {
            var seen: [[RecipeRoute]] = []
            for await routes in path.changes {
                seen.append(routes)
                if routes == [.settings] { break }
            }
            return seen
        }
        try await path.update { $0 = [.recipe(1)] }
        path.routes = [.recipe(2)]
        #expect(path.routes == [.recipe(2)], "a value set through the binding did not show at once")
        try await path.update { $0.append(.recipe(3)) }
        // Another writer: an app that only writes its file.
        try SceneFile(scene: Self.scene, directory: daemon.scenes.path).write([RecipeRoute.settings])
        #expect(await seen.value == [[.settings]])
        #expect(path.routes == [.settings])
    }

    @Test func aForeignElementIsAnErrorNeverADrop() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.cleanup() }
        try daemon.writeScene("com.example.Recipes.other", #"["MyApp.Other","{}"]"#)
        try await daemon.start()
        let session = session(daemon)
        do {
            _ = try await session.path("com.example.Recipes.other", as: RecipeRoute.self)
            Issue.record("a path with a foreign element was decoded")
        } catch let error as SceneSyncClientError {
            #expect(error.code == .undecodableElement && error.index == 0)
        }

        let path = try await session.path(Self.scene, as: RecipeRoute.self)
        try await path.update { $0 = [.recipe(1)] }
        var failures = path.failures.makeAsyncIterator()
        let tag = String(reflecting: RecipeRoute.self)
        try daemon.writeScene(Self.scene, #"["MyApp.Other","{}","\#(tag)","{\"recipe\":{\"_0\":1}}"]"#)
        let failure = await failures.next()
        #expect(failure?.code == .undecodableElement && failure?.index == 1, "\(String(describing: failure))")
        #expect(path.routes == [.recipe(1)], "the last good routes were not kept")
        // Writing over it would drop the foreign element: refused.
        await #expect(throws: SceneSyncClientError.self) { try await path.update { $0.append(.settings) } }
        #expect(daemon.readScene(Self.scene)?.contains("MyApp.Other") == true)
    }

    @Test func aPathFollowsTheDaemonAcrossARestartAndWritesAfterIt() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.cleanup() }
        try await daemon.start()
        let session = session(daemon)
        let path = try await session.path(Self.scene, as: RecipeRoute.self)
        try await path.update { $0 = [.recipe(1)] }

        #expect(try await daemon.stop() == 0)
        try SceneFile(scene: Self.scene, directory: daemon.scenes.path).write([RecipeRoute.recipe(2)])
        try await daemon.start()
        #expect(await eventually { path.routes == [.recipe(2)] }, "\(path.routes)")
        try await path.update { $0.append(.settings) }
        #expect(daemon.readScene(Self.scene)?.contains("settings") == true)
        #expect(path.routes == [.recipe(2), .settings])
    }

    /// An update made while the daemon is away waits for it. The resumed subscription replays the file's change
    /// made meanwhile; the update then meets it as a conflict and commits on top. `changes` reports that change,
    /// which is not this mirror's, before the mirror's own, whatever the order in which the replay and the update's
    /// answer arrive.
    @Test func anUpdateThatWaitsOutARestartLetsChangesReportTheChangeMadeMeanwhile() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.cleanup() }
        try await daemon.start()
        let path = try await session(daemon).path(Self.scene, as: RecipeRoute.self)
        try await path.update { $0 = [.recipe(1)] }
        let changes = Recorded(path.changes)

        #expect(try await daemon.stop() == 0)
        try SceneFile(scene: Self.scene, directory: daemon.scenes.path).write([RecipeRoute.recipe(1), .settings])
        let update = Task { try await path.update { $0.append(.recipe(7)) } }
        try await daemon.start()
        try await update.value
        try await changes.wait(for: "the change made while the daemon was away") {
            $0.contains([.recipe(1), .settings])
        }
        #expect(!changes.values.contains([.recipe(1), .settings, .recipe(7)]), "the mirror's own write was reported")
        #expect(path.routes == [.recipe(1), .settings, .recipe(7)])
        #expect(try await daemon.routes(Self.scene) == [.recipe(1), .settings, .recipe(7)])
    }

    @Test func aResyncAfterACrashBringsTheCurrentState() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.cleanup() }
        try await daemon.start()
        let path = try await session(daemon).path(Self.scene, as: RecipeRoute.self)
        try await path.update { $0 = [.recipe(1)] }
        let changes = Task {
            for await routes in path.changes where routes == [.recipe(9)] { return true }
            return false
        }
        // Killed: the next daemon starts a new epoch, so the mirror cannot resume and resyncs.
        _ = try await daemon.stopped(SIGKILL)
        try SceneFile(scene: Self.scene, directory: daemon.scenes.path).write([RecipeRoute.recipe(9)])
        try await daemon.start()
        #expect(await changes.value)
        #expect(path.routes == [.recipe(9)])
    }

    @Test func aConsumerThatNeverReadsHoldsOnlyTheLatestRoutes() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.cleanup() }
        try await daemon.start()
        let path = try await session(daemon, name: "reader").path(Self.scene, as: RecipeRoute.self)
        var unread = path.changes.makeAsyncIterator()
        let writer = try await session(daemon, name: "writer").path(Self.scene, as: RecipeRoute.self)
        for i in 1...300 { try await writer.update { $0 = [.recipe(i)] } }
        #expect(await eventually { path.routes == [.recipe(300)] })
        // 300 changes went by; the sequence kept one value, the latest, not a backlog.
        #expect(await unread.next() == [.recipe(300)])
    }

    @Test func theBackgroundPhaseWaitsForTheBindingsWritesAndTheirSnapshot() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.cleanup() }
        try await daemon.start()
        let session = session(daemon)
        let path = try await session.path(Self.scene, as: RecipeRoute.self)
        path.routes = [.recipe(4)]
        path.routes = [.recipe(4), .settings]
        let snapshot = try #require(try await session.phase(.background, scene: Self.scene))
        #expect(daemon.readScene(Self.scene)?.contains("settings") == true)
        let written = try await SceneSyncConnection.withConnection(to: daemon.socketPath) {
            try await $0.get(Self.scene).scene
        }
        #expect(written.path.count == 2)
        #expect(snapshot.revision >= written.modified, "the snapshot was taken before the write")
    }

    @Test func theBlockingPhaseWorksFromAThreadWithoutAnAsyncContext() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.cleanup() }
        try await daemon.start()
        let session = session(daemon)
        let path = try await session.path(Self.scene, as: RecipeRoute.self)
        try await path.update { $0 = [.settings] }
        let result = await DedicatedThread.run("close-handler") { () -> Result<SnapshotInfo?, any Error> in
            Result { try session.phase(.background, scene: Self.scene, timeout: .seconds(10)) }
        }
        let snapshot = try #require(try result.get())
        #expect(snapshot.scenes == 1)
    }

    @Test func sceneIDsListTheWindowsToReopen() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.cleanup() }
        try daemon.writeScene("com.example.Recipes.window-2", "[]")
        try daemon.writeScene("com.example.Recipes.window-1", "[]")
        try daemon.writeScene("com.example.Other.window-1", "[]")
        try await daemon.start()
        let ids = try await session(daemon).sceneIDs(matching: "com.example.Recipes.*")
        #expect(ids == ["com.example.Recipes.window-1", "com.example.Recipes.window-2"])
    }

    @Test func aRequestWithNoDaemonFailsAtItsDeadline() async throws {
        let directory = try TemporaryDirectory("ssnd")
        defer { directory.remove() }
        let session = SceneSyncSession(
            socketPath: directory.appending("none.sock").path, requestTimeout: .seconds(3),
            backoff: Self.quickBackoff)
        do {
            _ = try await session.sceneIDs(matching: "*")
            Issue.record("a request without a daemon did not fail")
        } catch let error as SceneSyncClientError {
            #expect(error.code == .timedOut)
            #expect(error.message.contains("no daemon"), "\(error)")
        }
    }
}
