import Testing

@testable import SceneSyncCore

@Suite("ScenePattern")
struct ScenePatternTests {
    @Test(
        "patterns that match",
        arguments: [
            ("*", "anything"), ("*", "a"), ("main", "main"), ("main*", "main"), ("main*", "main-2"), ("*-2", "main-2"),
            ("m*n", "main"), ("m*n", "mn"), ("*a*", "a"), ("*a*", "banana"), ("a*b*c", "aXbYc"), ("a*b*c", "abc"),
            ("a*b*c", "abcbc"), ("?", "x"), ("??", "ab"), ("m?in", "main"), ("?ain", "main"), ("*?", "a"),
            ("[abc]", "b"), ("[abc]x", "cx"), ("[a-z]", "q"), ("[a-z0-9]", "7"), ("[A-Z]*", "Main"), ("[!x]", "y"),
            ("[^x]", "y"), ("[!a-c]", "d"), ("[]]", "]"), ("[!]]", "a"), ("[a-]", "-"), ("[-a]", "-"),
            ("win[0-9][0-9]", "win42"), ("[", "["), ("a[", "a["), ("a[b", "a[b"), ("*[", "x["), ("[*", "[abc"),
            ("a.*", "a.b"), ("*.*", "a.b"), ("**", "x"), ("a**b", "ab"), ("*b", "aab"), ("*ab", "aab"),
        ])
    func matching(_ pattern: String, _ name: String) {
        #expect(ScenePattern(pattern).matches(name))
    }

    @Test(
        "patterns that do not match",
        arguments: [
            ("main", "main2"), ("main", "mai"), ("main", "Main"), ("main*", "mai"), ("*-2", "main-3"), ("m*n", "mains"),
            ("a*b*c", "aXbY"), ("a*b*c", "acb"), ("?", ""), ("?", "ab"), ("??", "a"), ("[abc]", "d"), ("[abc]", "ab"),
            ("[a-z]", "A"), ("[a-z]", "-"), ("[!x]", "x"), ("[^x]", "x"), ("[!a-c]", "b"), ("[]]", "a"), ("[a-]", "b"),
            ("[", "a"), ("a[b", "ab"), ("[", ""), ("x", ""), ("*a", "b"), ("a*", ""), ("[z-a]", "m"),
            ("win[0-9][0-9]", "win4x"),
        ])
    func notMatching(_ pattern: String, _ name: String) {
        #expect(!ScenePattern(pattern).matches(name))
    }

    @Test("matching scene IDs")
    func sceneIDs() throws {
        let ids = try ["main", "main-2", "settings", "window.1", "window.10"].map { try sceneID($0) }
        func matched(_ pattern: String) -> [String] {
            ids.filter { ScenePattern(pattern).matches($0) }.map(\.rawValue)
        }
        #expect(matched("*") == ["main", "main-2", "settings", "window.1", "window.10"])
        #expect(matched("main*") == ["main", "main-2"])
        #expect(matched("window.?") == ["window.1"])
        #expect(matched("window.*") == ["window.1", "window.10"])
        #expect(matched("[ms]*") == ["main", "main-2", "settings"])
        #expect(matched("[!m]*") == ["settings", "window.1", "window.10"])
        #expect(matched("nothing").isEmpty)
        #expect(ScenePattern.all.matches(try sceneID("x")))
    }

    @Test("patterns are values")
    func values() {
        #expect(ScenePattern("a*") == ScenePattern("a*"))
        #expect(ScenePattern("a*") != ScenePattern("b*"))
        #expect(ScenePattern("a*").text == "a*")
        #expect(ScenePattern("a*").description == "a*")
        #expect(Set([ScenePattern("x"), ScenePattern("x"), ScenePattern("y")]).count == 2)
        #expect(ScenePattern.all == ScenePattern("*"))
    }

    /// Naive recursive globbing takes exponential time here; the matcher must stay polynomial.
    @Test("no exponential blowup", .timeLimit(.minutes(1)))
    func noBlowup() {
        let long = String(repeating: "a", count: 5_000)
        #expect(!ScenePattern("a*a*a*a*a*b").matches(long))
        #expect(ScenePattern("a*a*a*a*a*a").matches(long))
        #expect(!ScenePattern("*a*a*a*a*a*a*a*a*a*a*b").matches(long))
        #expect(!ScenePattern("*?*?*?*?*?*?*?*b").matches(long))
        #expect(ScenePattern("*[a]*[a]*[!b]").matches(long))
        #expect(!ScenePattern("a*a*a*a*a*b").matches(long + long))
    }
}
