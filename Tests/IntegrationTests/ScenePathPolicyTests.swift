import Foundation
import SceneSyncClient
import SceneSyncCore
import Testing

/// SPEC §10 "Routes that no longer decode", against the real daemon: a scene written by an older version of the
/// app (a route case that no longer exists, a codable element of a renamed module) opened under each
/// `UndecodableRoutes` policy, in a codable and in an array scene. Opening writes nothing; a later change holding
/// such elements follows the same policy; once the app writes, the scene holds only its routes.
@Suite struct ScenePathPolicyTests {
    /// A scene's elements, root first: the tag in a codable scene, the stored JSON, and the route if it decodes by
    /// itself.
    struct StoredScene: Sendable, CustomTestStringConvertible {
        var format: SceneFormat
        var entries: [(tag: String?, json: String, route: RecipeRoute?)]

        var testDescription: String { "\(format) scene" }

        /// The routes of the newer app, in `format`.
        init(_ format: SceneFormat, _ routes: [RecipeRoute]) {
            self.format = format
            entries = routes.map { (format == .codable ? RecipeRoute.tag : nil, Self.json($0), $0) }
        }

        /// The older app's elements on top of these.
        func with(_ older: [(tag: String?, json: String, route: RecipeRoute?)]) -> StoredScene {
            var scene = self
            scene.entries += older
            return scene
        }

        /// The first element that does not decode.
        var culprit: Int { entries.firstIndex { $0.route == nil } ?? entries.count }

        /// The decodable bottom, as `.keepPrefix` shows it.
        var prefix: [RecipeRoute] { entries.prefix(culprit).compactMap(\.route) }

        /// The scene file's content: top of the stack first in a codable scene, root first in an array scene.
        var file: String {
            switch format {
            case .codable:
                "[" + entries.reversed().map { "\(J.string($0.tag ?? "")),\(J.string($0.json))" }.joined(separator: ",")
                    + "]"
            case .array:
                "[" + entries.map(\.json).joined(separator: ",") + "]"
            }
        }

        static func json(_ route: RecipeRoute) -> String {
            switch route {
            case .recipe(let id): #"{"recipe":{"_0":\#(id)}}"#
            case .settings: #"{"settings":{}}"#
            }
        }
    }

    static let scene = "com.example.Recipes.window-1"
    static let removedCase = #"{"timer":{"_0":5}}"#

    /// What the older app wrote on top of routes that still decode: in a codable scene a renamed module's element,
    /// then a removed case, then a route that still decodes; in an array scene (no tags) a removed case, then a
    /// route that still decodes.
    static func older(_ format: SceneFormat, bottom: [RecipeRoute]) -> StoredScene {
        switch format {
        case .codable:
            StoredScene(.codable, bottom).with([
                ("OldRecipes.RecipeRoute", StoredScene.json(.recipe(2)), nil), (RecipeRoute.tag, removedCase, nil),
                (RecipeRoute.tag, StoredScene.json(.settings), .settings),
            ])
        case .array:
            StoredScene(.array, bottom).with([(nil, removedCase, nil), (nil, StoredScene.json(.settings), .settings)])
        }
    }

    static let formats: [SceneFormat] = [.codable, .array]

    /// A daemon whose scene holds what the older app wrote.
    func daemon(with stored: StoredScene) async throws -> DaemonProcess {
        let daemon = try DaemonProcess()
        try daemon.writeScene(Self.scene, stored.file)
        try await daemon.start()
        return daemon
    }

    /// Opens the scene under `policy`, checking that the opening wrote nothing: the file is byte for byte what it
    /// was, and neither the daemon's revision nor the scene's history moved.
    func open(
        _ daemon: DaemonProcess, _ policy: UndecodableRoutes
    ) async throws -> Result<ScenePath<RecipeRoute>, SceneSyncClientError> {
        let bytes = try #require(daemon.sceneBytes(Self.scene))
        let revision = try await daemon.revision()
        let history = try await daemon.history(Self.scene).count
        let session = appSession(daemon, name: "newer-app")
        let opened: Result<ScenePath<RecipeRoute>, SceneSyncClientError>
        do {
            opened = .success(try await session.path(Self.scene, as: RecipeRoute.self, undecodable: policy))
        } catch let error as SceneSyncClientError {
            opened = .failure(error)
        }
        // Whatever the session had to write is written before the background phase returns.
        try await session.phase(.background, scene: Self.scene)
        #expect(daemon.sceneBytes(Self.scene) == bytes, "opening changed the file")
        #expect(try await daemon.revision() == revision, "opening made a change")
        #expect(try await daemon.history(Self.scene).count == history, "opening made a change")
        return opened
    }

    /// Replaces the scene as another writer would: the `scenesync` CLI, or the older app writing its file.
    func change(_ daemon: DaemonProcess, to stored: StoredScene, withCLI: Bool) async throws {
        if withCLI {
            let set = try await CLIProcess.run(["set", Self.scene, stored.file, "--socket", daemon.socketPath])
            try #require(set.status == 0, "\(set)")
        } else {
            try daemon.writeScene(Self.scene, stored.file)
        }
    }

    /// `skipped` lists the elements from `start` to the top, each with its position, tag and stored JSON, and why it
    /// was left out: its own error, or (one that decodes by itself) the culprit's.
    func checkSkipped(_ skipped: [SkippedRoute], of stored: StoredScene, from start: Int) {
        #expect(skipped.map(\.position) == Array(start..<stored.entries.count), "\(skipped)")
        for entry in skipped where stored.entries.indices.contains(entry.position) {
            let element = stored.entries[entry.position]
            #expect(entry.tag == element.tag && entry.json == element.json, "\(entry)")
            #expect(entry.error.code == .undecodableElement, "\(entry)")
            #expect(entry.error.index == (element.route == nil ? entry.position : stored.culprit), "\(entry)")
        }
    }

    /// The app writes: its routes replace the scene, the older elements go, and `skipped` is empty.
    func checkTheAppsWriteReplacesIt(
        _ daemon: DaemonProcess, _ path: ScenePath<RecipeRoute>, _ format: SceneFormat, _ routes: [RecipeRoute]
    ) async throws {
        #expect(path.skipped.isEmpty, "\(path.skipped)")
        #expect(path.routes == routes)
        let scene = try #require(try await daemon.currentScene(Self.scene))
        #expect(scene.format == format)
        #expect(daemon.readScene(Self.scene) == StoredScene(format, routes).file)
    }

    @Test(arguments: formats)
    func failThrowsNamingTheElementAndReportsALaterOne(_ format: SceneFormat) async throws {
        let stored = Self.older(format, bottom: [.recipe(1)])
        let daemon = try await daemon(with: stored)
        defer { daemon.cleanup() }
        guard case .failure(let error) = try await open(daemon, .fail) else {
            Issue.record("a scene with an undecodable element opened under .fail")
            return
        }
        let culprit = stored.entries[stored.culprit]
        #expect(error.code == .undecodableElement && error.index == stored.culprit, "\(error)")
        #expect(error.message.contains("element \(stored.culprit) "), "the position is not named: \(error)")
        #expect(error.message.contains(culprit.json), "the stored value is not named: \(error)")
        if let tag = culprit.tag {
            #expect(error.message.contains(tag), "the tag is not named: \(error)")
        } else {
            // No tag to blame: the decoder's own error says why.
            do {
                _ = try JSONDecoder().decode(RecipeRoute.self, from: Data(culprit.json.utf8))
                Issue.record("the culprit decodes")
            } catch let decoding {
                #expect(error.message.contains("\(decoding)"), "the decoding error is not named: \(error)")
            }
        }

        // The newer app's own scene opens; a later change holding older elements is reported on failures, and the
        // routes keep their last good value.
        try await change(daemon, to: StoredScene(format, [.recipe(7)]), withCLI: true)
        let path = try await appSession(daemon, name: "newer-app").path(Self.scene, as: RecipeRoute.self)
        #expect(path.routes == [.recipe(7)])
        let failures = Recorded(path.failures)
        let changes = Recorded(path.changes)
        let later = Self.older(format, bottom: [.recipe(7), .settings])
        try await change(daemon, to: later, withCLI: false)
        let reported = try await failures.first(.undecodableElement)
        #expect(reported.index == later.culprit, "\(reported)")
        #expect(path.routes == [.recipe(7)] && path.skipped.isEmpty)
        #expect(changes.values.isEmpty, "an undecodable change was reported as routes: \(changes.values)")
        // Writing over it would drop the older elements: refused, and the file keeps them.
        await #expect(throws: SceneSyncClientError.self) { try await path.update { $0.append(.settings) } }
        #expect(daemon.readScene(Self.scene) == later.file)
    }

    @Test(arguments: formats)
    func keepPrefixShowsTheBottomThatDecodesAndSkipsTheRest(_ format: SceneFormat) async throws {
        let stored = Self.older(format, bottom: [.recipe(1)])
        let daemon = try await daemon(with: stored)
        defer { daemon.cleanup() }
        let path = try await open(daemon, .keepPrefix).get()
        #expect(path.routes == [.recipe(1)])
        checkSkipped(path.skipped, of: stored, from: stored.culprit)

        // A later change holding older elements: the new bottom shows, on changes too, and skipped follows.
        let changes = Recorded(path.changes)
        let later = Self.older(format, bottom: [.recipe(7), .settings])
        try await change(daemon, to: later, withCLI: false)
        try await changes.wait(for: "the later change's bottom") { $0.last == [.recipe(7), .settings] }
        #expect(path.routes == [.recipe(7), .settings])
        checkSkipped(path.skipped, of: later, from: later.culprit)

        try await path.update { $0.append(.recipe(8)) }
        try await checkTheAppsWriteReplacesIt(daemon, path, format, [.recipe(7), .settings, .recipe(8)])
    }

    @Test(arguments: formats)
    func startAtRootShowsNothingAndSkipsEverything(_ format: SceneFormat) async throws {
        let stored = Self.older(format, bottom: [.recipe(1)])
        let daemon = try await daemon(with: stored)
        defer { daemon.cleanup() }
        let path = try await open(daemon, .startAtRoot).get()
        #expect(path.routes.isEmpty)
        checkSkipped(path.skipped, of: stored, from: 0)

        let changes = Recorded(path.changes)
        let later = Self.older(format, bottom: [.settings])
        try await change(daemon, to: later, withCLI: true)
        try await changes.wait(for: "the later change, at the root") { $0.last == [] }
        #expect(path.routes.isEmpty)
        checkSkipped(path.skipped, of: later, from: 0)

        // The binding pushes a route: the scene holds only it.
        path.routes = [.recipe(9)]
        try await path.update { _ in }
        try await checkTheAppsWriteReplacesIt(daemon, path, format, [.recipe(9)])
    }
}
