import SceneSyncCore
import SceneSyncTestKit

/// Patterns and scene IDs for the tests of who receives an event, drawn from a few characters so that they meet
/// often: literals that name a scene and literals that cannot (no valid scene ID), every kind of wildcard and
/// bracket, malformed brackets included.
enum SubscriptionPatterns {
    /// The characters of scene IDs the tests draw: a valid ID starts with one of the first four.
    static let sceneCharacters = ["a", "b", "c", "1", ".", "-", "_"]
    static let patternTokens =
        sceneCharacters + ["*", "?", "[ab]", "[!a]", "[^b]", "[a-c]", "[]a]", "[-a]", "[", "]", "!", "/", ".json"]

    /// What the daemon did before the index: every live subscription whose patterns match, in ID order; every live
    /// subscription for `nil`.
    static func bruteForce(_ live: [UInt64: [ScenePattern]], _ scene: SceneID?) -> [UInt64] {
        live.keys.sorted().filter { id in
            guard let scene else { return true }
            return (live[id] ?? []).contains { $0.matches(scene) }
        }
    }
}

extension SplitMix64 {
    /// A pattern of up to four tokens: empty, literal or wildcard.
    mutating func scenePattern() -> ScenePattern {
        ScenePattern((0..<below(5)).map { _ in pick(SubscriptionPatterns.patternTokens) }.joined())
    }

    /// One to four patterns, repeats possible.
    mutating func scenePatterns() -> [ScenePattern] {
        (0..<(1 + below(4))).map { _ in scenePattern() }
    }

    /// A valid scene ID of one to five characters; when `literals` offers some, often one of the scenes they name,
    /// so that literal patterns are hit as often as wildcards.
    mutating func sceneID(naming literals: [ScenePattern] = []) -> SceneID {
        let named = literals.filter(\.isLiteral).compactMap { SceneID($0.text) }
        if !named.isEmpty, chance(50) { return pick(named) }
        let characters = SubscriptionPatterns.sceneCharacters
        let text = pick(Array(characters.prefix(4))) + (0..<below(5)).map { _ in pick(characters) }.joined()
        return scene(text)
    }
}
