import SceneSyncTestKit
import Testing

@testable import SceneSyncCore

@Suite("SceneID")
struct SceneIDTests {
    static let longest = "a" + String(repeating: "b", count: 127)

    @Test(
        "IDs matching ^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$ and not ending in .json are valid",
        arguments: [
            "a", "Z", "0", "main", "Main-Window_2", "window.1", "a.b.c", "1-", "a_", "x.JSON", "a.jsonx", "json",
            "a.js", "a..b", "9.json.x", longest,
        ])
    func valid(_ raw: String) throws {
        #expect(SceneID.isValid(raw))
        let id = try #require(SceneID(raw))
        #expect(id.rawValue == raw)
        #expect(id.description == raw)
        #expect(id.fileName == raw + ".json")
        #expect(SceneID(fileName: id.fileName) == id)
    }

    @Test(
        "other IDs are invalid",
        arguments: [
            "", ".a", "-a", "_a", " a", "a b", "a/b", "a\\b", "a:b", "a*", "a?", "é", "aé", "a\n", "a.json", ".json",
            "b.c.json", longest + "c", "a\u{0}", "ａ",
        ])
    func invalid(_ raw: String) {
        #expect(!SceneID.isValid(raw))
        #expect(SceneID(raw) == nil)
    }

    @Test("a 128-character ID is valid, 129 is not")
    func length() {
        #expect(Self.longest.utf8.count == 128)
        #expect(SceneID(Self.longest) != nil)
        #expect(SceneID(Self.longest + "x") == nil)
    }

    @Test(
        "file names the watcher must ignore",
        arguments: [
            ".hidden.json", ".json", "a", "a.tmp", "a.json.tmp", "a~", "a.json~", "a.txt", "a.JSON", "a.json.swp",
            ".a.json.tmp", "a.json.json", "a b.json", "", "-x.json", "a.jsonl", ".#a.json",
        ])
    func ignoredFileNames(_ name: String) {
        #expect(SceneID(fileName: name) == nil)
        #expect(Array(name.utf8).withUnsafeBytes { SceneID(fileName: $0) } == nil)
    }

    @Test(
        "file names of scenes",
        arguments: [("main.json", "main"), ("a.b.json", "a.b"), ("x.tmp.json", "x.tmp"), ("A-1_b.json", "A-1_b")])
    func sceneFileNames(_ name: String, _ expected: String) throws {
        #expect(SceneID(fileName: name)?.rawValue == expected)
        #expect(Array(name.utf8).withUnsafeBytes { SceneID(fileName: $0) }?.rawValue == expected)
    }

    @Test("IDs sort in byte order")
    func ordering() throws {
        let ids = ["b", "B", "a", "_x", "a.b", "a-b", "a_b", "A", "10", "9", "a0"].compactMap { SceneID($0) }
        #expect(ids.count == 10)
        #expect(ids.sorted().map(\.rawValue) == ["10", "9", "A", "B", "a", "a-b", "a.b", "a0", "a_b", "b"])
        #expect(try sceneID("a") < (try sceneID("b")))
        #expect(!(try sceneID("b") < (try sceneID("a"))))
        #expect(try sceneID("a") == (try sceneID("a")))
        #expect(Set(try ["a", "a", "b"].map { try sceneID($0) }).count == 2)
    }

    /// `<` compares eight bytes at a time, and a store sorts by the first 16 bytes before comparing whole IDs: both
    /// agree with a walk byte by byte (what `LC_ALL=C sort` does) for IDs of every length around those widths,
    /// sharing prefixes of every length.
    @Test("byte order holds across word and key widths")
    func orderingAcrossWidths() throws {
        var random = SplitMix64(seed: 0x1D5)
        let alphabet = Array("09AZaz.-_".utf8)
        var ids: [SceneID] = []
        for _ in 0..<600 {
            let stem = String(repeating: "w", count: random.below(20) + 1)
            let tail = (0..<random.below(20)).map { _ in alphabet[random.below(alphabet.count)] }
            ids.append(try sceneID(stem + String(decoding: tail, as: UTF8.self)))
        }
        let reference = { (a: SceneID, b: SceneID) in a.rawValue.utf8.lexicographicallyPrecedes(b.rawValue.utf8) }
        for _ in 0..<20_000 {
            let a = ids[random.below(ids.count)]
            let b = ids[random.below(ids.count)]
            #expect((a < b) == reference(a, b), "\(a) < \(b)")
        }
        var store = SceneStore(epoch: "e")
        for id in ids {
            store.restore(SceneState(id: id, version: 1, created: 1, modified: 1, format: .array, path: []))
        }
        let unique = Array(Set(ids))
        #expect(store.scenes.map(\.id) == unique.sorted(by: reference))
        #expect(unique.sorted() == unique.sorted(by: reference))
    }
}
