import Foundation
import SceneSyncCore
import Testing

@testable import SceneSyncClient

/// A route at file scope: its qualified name is stable.
struct PageRoute: Codable, Sendable, Equatable {
    var id: Int
    var title: String
}

/// Routes that only decode, and routes that only encode: `SceneFile` asks no more of a type (SPEC §10).
struct ReadOnlyRoute: Decodable, Equatable {
    var id: Int
}

struct WriteOnlyRoute: Encodable {
    var id: Int
}

/// `SceneFile`, the route coding it shares with `ScenePath`, and new scene IDs: files only, no daemon.
@Suite struct SceneFileLibraryTests {
    let directory: URL

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("scenefile-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    func file(_ scene: String = "com.example.App.window-1") -> SceneFile {
        SceneFile(scene: scene, directory: directory.path)
    }

    func contents(_ scene: String = "com.example.App.window-1") throws -> String {
        try String(contentsOf: directory.appendingPathComponent(scene + ".json"), encoding: .utf8)
    }

    @Test func aMissingFileIsAnEmptyPath() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        #expect(try file().read(as: PageRoute.self).isEmpty)
    }

    @Test func writesAreCodableTopFirstWithSortedKeysAndReadBack() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let routes = [PageRoute(id: 1, title: "Soup"), PageRoute(id: 2, title: "Pie")]
        try file().write(routes)
        let tag = "SceneSyncClientTests.PageRoute"
        #expect(
            try contents()
                == #"["\#(tag)","{\"id\":2,\"title\":\"Pie\"}","\#(tag)","{\"id\":1,\"title\":\"Soup\"}"]"#)
        #expect(try file().read(as: PageRoute.self) == routes)
        // Only the scene file is left: the temp file was renamed over it.
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["com.example.App.window-1.json"])
    }

    @Test func aDecodableTypeReadsAndAnEncodableTypeWrites() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        try Data("[{\"id\":1},{\"id\":2}]".utf8).write(
            to: directory.appendingPathComponent("com.example.App.window-1.json"))
        #expect(try file().read(as: ReadOnlyRoute.self) == [ReadOnlyRoute(id: 1), ReadOnlyRoute(id: 2)])
        try file().write([WriteOnlyRoute(id: 3)])
        #expect(try contents() == #"[{"id":3}]"#, "an array file stays an array")
    }

    @Test func anArrayFileStaysAnArray() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        try Data("[1,2]".utf8).write(to: directory.appendingPathComponent("com.example.App.window-1.json"))
        #expect(try file().read(as: Int.self) == [1, 2])
        try file().write([1, 2, 3])
        #expect(try contents() == "[1,2,3]")
    }

    @Test func aForeignElementIsAnErrorWithItsPosition() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        try Data(#"["Swift.Int","1","MyApp.Other","{}"]"#.utf8)
            .write(to: directory.appendingPathComponent("com.example.App.window-1.json"))
        #expect {
            _ = try file().read(as: Int.self)
        } throws: { error in
            (error as? SceneSyncClientError)?.code == .undecodableElement
                && (error as? SceneSyncClientError)?.index == 0
        }
    }

    @Test func anInvalidSceneIDIsRefusedBeforeAnyFileIsTouched() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        for scene in ["../escape", ".hidden", "x.json", ""] {
            #expect {
                try file(scene).write([1])
            } throws: { error in
                (error as? SceneSyncClientError)?.code == .invalidSceneID
            }
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
    }

    @Test func aWriteIntoAMissingDirectoryFailsClearly() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let missing = SceneFile(scene: "s", directory: directory.appendingPathComponent("nope").path)
        #expect {
            try missing.write([1])
        } throws: { error in
            guard let error = error as? SceneSyncClientError else { return false }
            return error.code == .fileSystem && error.message.contains("No such file")
        }
    }

    @Test func aTypeWithoutAStableNameCannotTagElements() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        struct LocalRoute: Codable, Sendable { var id: Int }
        #expect {
            try file().write([LocalRoute(id: 1)])
        } throws: { error in
            (error as? SceneSyncClientError)?.code == .unstableTypeName
        }
        #expect(try RouteCoding<PageRoute>().tag == String(reflecting: PageRoute.self))
    }

    @Test func newSceneIDsAreValidDistinctAndUnderThePrefix() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let first = try SceneSyncSession.newSceneID(prefix: "com.example.Recipes")
        let second = try SceneSyncSession.newSceneID(prefix: "com.example.Recipes")
        #expect(first != second)
        #expect(first.hasPrefix("com.example.Recipes.window-") && SceneID.isValid(first))
        for prefix in ["", "-bad", "has space", String(repeating: "a", count: 120)] {
            #expect(throws: SceneSyncClientError.self) { try SceneSyncSession.newSceneID(prefix: prefix) }
        }
    }
}
