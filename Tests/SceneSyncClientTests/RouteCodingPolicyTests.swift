import Foundation
import SceneSyncCore
import Testing

@testable import SceneSyncClient

/// A route of the app's newer version, at file scope so that its qualified name is stable.
enum PolicyRoute: Codable, Sendable, Equatable {
    case recipe(Int)
    case settings
}

/// `RouteCoding.decode(_:policy:)`: what a mirror shows of a scene an older version of the app wrote (§10 "Routes
/// that no longer decode"), under each `UndecodableRoutes` policy, for codable and array scenes.
@Suite struct RouteCodingPolicyTests {
    static let tag = "SceneSyncClientTests.PolicyRoute"

    /// One scene an older app wrote: its elements, the routes of those that decode by themselves, and the first one
    /// that does not.
    struct OlderScene: CustomTestStringConvertible, Sendable {
        var name: String
        /// Root first: the tag (nil in an array scene), the item's JSON text, and the route it decodes to by itself.
        var entries: [(tag: String?, json: String, route: PolicyRoute?)]
        var culprit: Int

        var testDescription: String { name }

        var elements: [Element] {
            get throws { try entries.map { try Element(tag: $0.tag, json: Array($0.json.utf8)) } }
        }
    }

    static let recipe1 = #"{"recipe":{"_0":1}}"#
    static let recipe3 = #"{"recipe":{"_0":3}}"#
    static let settings = #"{"settings":{}}"#

    static let olderScenes: [OlderScene] = [
        OlderScene(
            name: "codable, another tag",
            entries: [
                (tag, recipe1, .recipe(1)), ("OldModule.PolicyRoute", #"{"recipe":{"_0":2}}"#, nil),
                (tag, recipe3, .recipe(3)), (tag, settings, .settings),
            ],
            culprit: 1),
        OlderScene(
            name: "codable, a removed case",
            entries: [(tag, recipe1, .recipe(1)), (tag, recipe3, .recipe(3)), (tag, #"{"timer":{"_0":5}}"#, nil)],
            culprit: 2),
        OlderScene(
            name: "codable, another shape at the root",
            entries: [(tag, "42", nil), (tag, settings, .settings), (tag, #"{"timer":{}}"#, nil)],
            culprit: 0),
        OlderScene(
            name: "array, a removed case",
            entries: [(nil, recipe1, .recipe(1)), (nil, #"{"timer":{}}"#, nil), (nil, settings, .settings)],
            culprit: 1),
        OlderScene(
            name: "array, another shape on top",
            entries: [(nil, recipe1, .recipe(1)), (nil, recipe3, .recipe(3)), (nil, #"["settings"]"#, nil)],
            culprit: 2),
    ]

    let coding: RouteCoding<PolicyRoute>

    init() throws {
        coding = try RouteCoding<PolicyRoute>()
        #expect(coding.tag == Self.tag)
    }

    /// What `JSONDecoder` itself says of an item, for comparing with the message that names it.
    static func decodingError(_ json: String) -> String? {
        do {
            _ = try JSONDecoder().decode(PolicyRoute.self, from: Data(json.utf8))
            return nil
        } catch {
            return "\(error)"
        }
    }

    @Test(arguments: olderScenes)
    func failNamesThePositionTheTagAndWhy(_ scene: OlderScene) throws {
        let decoded = coding.decode(try scene.elements, policy: .fail)
        let failure = try #require(decoded.failure, "an undecodable element was not a failure")
        #expect(failure.code == .undecodableElement && failure.index == scene.culprit)
        let culprit = scene.entries[scene.culprit]
        #expect(failure.message.contains("element \(scene.culprit) "), "\(failure.message)")
        #expect(failure.message.contains(culprit.json), "the stored value is not named: \(failure.message)")
        if let elementTag = culprit.tag {
            #expect(failure.message.contains(elementTag), "the tag is not named: \(failure.message)")
        }
        if culprit.tag == Self.tag || culprit.tag == nil {
            // It has the right tag (or none): why it does not decode is the decoder's own error.
            let why = try #require(Self.decodingError(culprit.json))
            #expect(failure.message.contains(why), "the decoding error is not named: \(failure.message)")
        } else {
            #expect(failure.message.contains("not a \(Self.tag)"), "\(failure.message)")
        }
        // The throwing decode says the same.
        #expect(throws: failure) { _ = try coding.decode(try scene.elements) }
    }

    @Test(arguments: olderScenes)
    func keepPrefixShowsTheBottomThatDecodes(_ scene: OlderScene) throws {
        let decoded = coding.decode(try scene.elements, policy: .keepPrefix)
        #expect(decoded.failure == nil)
        #expect(decoded.routes == scene.entries.prefix(scene.culprit).compactMap(\.route))
        try checkSkipped(decoded.skipped, of: scene, from: scene.culprit)
    }

    @Test(arguments: olderScenes)
    func startAtRootShowsNothingAndSkipsEverything(_ scene: OlderScene) throws {
        let decoded = coding.decode(try scene.elements, policy: .startAtRoot)
        #expect(decoded.failure == nil)
        #expect(decoded.routes.isEmpty)
        try checkSkipped(decoded.skipped, of: scene, from: 0)
    }

    /// `skipped` holds every element from `start` to the top, root first, each with its position, tag and stored
    /// JSON, and why it was left out: its own error, or (one that decodes by itself) the culprit's index.
    func checkSkipped(_ skipped: [SkippedRoute], of scene: OlderScene, from start: Int) throws {
        #expect(skipped.map(\.position) == Array(start..<scene.entries.count))
        for entry in skipped {
            let stored = scene.entries[entry.position]
            #expect(entry.tag == stored.tag && entry.json == stored.json, "\(entry)")
            #expect(entry.error.code == .undecodableElement, "\(entry)")
            if stored.route != nil {
                #expect(entry.error.index == scene.culprit, "a route left out for another's sake: \(entry)")
                #expect(entry.error.message.contains("element \(scene.culprit)"), "\(entry)")
            } else {
                // Its own decoding error, whichever element is the culprit.
                #expect(entry.error.index == entry.position, "\(entry)")
                #expect(entry.error.message.contains("element \(entry.position) "), "\(entry)")
            }
        }
        // The culprit's own error is the one `.fail` reports.
        let failure = try #require(coding.decode(try scene.elements, policy: .fail).failure)
        #expect(skipped.first { $0.position == scene.culprit }?.error == failure)
    }

    @Test(arguments: [UndecodableRoutes.fail, .keepPrefix, .startAtRoot], [SceneFormat.codable, .array])
    func aPathThatDecodesIsTheSameUnderEveryPolicy(_ policy: UndecodableRoutes, _ format: SceneFormat) throws {
        let routes: [PolicyRoute] = [.recipe(1), .settings, .recipe(2)]
        let elements = try coding.encode(routes, as: format)
        #expect(elements.allSatisfy { $0.tag == (format == .codable ? Self.tag : nil) })
        let decoded = coding.decode(elements, policy: policy)
        #expect(decoded.routes == routes && decoded.skipped.isEmpty && decoded.failure == nil)
        let empty = coding.decode([], policy: policy)
        #expect(empty.routes.isEmpty && empty.skipped.isEmpty && empty.failure == nil)
    }
}
