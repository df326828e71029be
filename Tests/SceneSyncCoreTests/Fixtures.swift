import Testing

@testable import SceneSyncCore

/// Scene files as apps really write them: `JSONEncoder` output of `NavigationPath.CodableRepresentation` (codable)
/// or of a homogeneous `[Value]` path (array), compact and pretty-printed.
enum Fixtures {
    /// The path `[applePie, 42]` (root first) from SwiftUI's documentation, top of the stack first in the file.
    static let recipeCodable = #"["Swift.Int","42","MyApp.Recipe","{\"applePie\":{}}"]"#

    /// NavigationBackport's example app.
    static let emojiCodable =
        #"["NavigationBackportApp.EmojiVisualisation","{\"emoji\":\"🎈\",\"count\":99}","Swift.Int","99"]"#

    /// A generic tag.
    static let genericCodable = #"["Swift.Array<Swift.Int>","[1,2,3]","Swift.String","\"hello\""]"#

    /// The same path as ``recipeCodable``, as `JSONEncoder` with `.prettyPrinted` writes it.
    static let recipeCodablePretty = """
        [
          "Swift.Int",
          "42",
          "MyApp.Recipe",
          "{\\"applePie\\":{}}"
        ]
        """

    /// `JSONEncoder` escapes `/` by default: in the inner item only (the outer literal re-escapes the backslash).
    static let slashCodableInner = #"["MyApp.Link","{\"url\":\"https:\\/\\/x\"}"]"#

    /// `JSONEncoder` escapes `/` by default: inner and outer encodings both escaped, as the real output is.
    static let slashCodableBoth = #"["MyApp.Link","{\"url\":\"https:\\\/\\\/x\"}"]"#

    /// A `\u00e9` escape in the inner item and one in the outer literal.
    static let unicodeEscapeCodable = #"["MyApp.Place","{\"name\":\"Caf\\u00e9\"}","MyApp.City","\"Z\u00fcrich\""]"#

    /// Raw non-ASCII UTF-8.
    static let nonASCIICodable = #"["MyApp.Place","{\"name\":\"Café\",\"emoji\":\"🍰\"}","MyApp.City","\"Zürich\""]"#

    static let recipeArray = #"[{"applePie":{}},{"chocolateCake":{}}]"#
    static let intArray = "[1,2,3]"

    /// An array file as `JSONEncoder` with `.prettyPrinted` writes it (two-space indent, `" : "`).
    static let recipeArrayPretty = """
        [
          {
            "applePie" : {

            }
          },
          {
            "chocolateCake" : {

            }
          }
        ]
        """

    /// `.prettyPrinted` and `.sortedKeys` on a codable path with escapes.
    static let emojiCodablePretty = """
        [
          "NavigationBackportApp.EmojiVisualisation",
          "{\\"count\\":99,\\"emoji\\":\\"🎈\\"}",
          "Swift.Int",
          "99"
        ]
        """

    /// Every well-formed fixture, with the path it must decode to (root first) and its format.
    static let all: [FixtureFile] = [
        FixtureFile(
            "recipe codable", recipeCodable, .codable,
            [("MyApp.Recipe", #"{"applePie":{}}"#), ("Swift.Int", "42")]),
        FixtureFile(
            "emoji codable", emojiCodable, .codable,
            [("Swift.Int", "99"), ("NavigationBackportApp.EmojiVisualisation", #"{"emoji":"🎈","count":99}"#)]),
        FixtureFile(
            "generic codable", genericCodable, .codable,
            [("Swift.String", #""hello""#), ("Swift.Array<Swift.Int>", "[1,2,3]")]),
        FixtureFile(
            "recipe codable pretty", recipeCodablePretty, .codable,
            [("MyApp.Recipe", #"{"applePie":{}}"#), ("Swift.Int", "42")]),
        FixtureFile(
            "emoji codable pretty", emojiCodablePretty, .codable,
            [("Swift.Int", "99"), ("NavigationBackportApp.EmojiVisualisation", #"{"emoji":"🎈","count":99}"#)]),
        FixtureFile("slash inner", slashCodableInner, .codable, [("MyApp.Link", #"{"url":"https://x"}"#)]),
        FixtureFile("slash both", slashCodableBoth, .codable, [("MyApp.Link", #"{"url":"https://x"}"#)]),
        FixtureFile(
            "unicode escapes", unicodeEscapeCodable, .codable,
            [("MyApp.City", #""Zürich""#), ("MyApp.Place", #"{"name":"Café"}"#)]),
        FixtureFile(
            "non-ASCII", nonASCIICodable, .codable,
            [("MyApp.City", #""Zürich""#), ("MyApp.Place", #"{"name":"Café","emoji":"🍰"}"#)]),
        FixtureFile(
            "recipe array", recipeArray, .array, [(nil, #"{"applePie":{}}"#), (nil, #"{"chocolateCake":{}}"#)]),
        FixtureFile("int array", intArray, .array, [(nil, "1"), (nil, "2"), (nil, "3")]),
        FixtureFile(
            "recipe array pretty", recipeArrayPretty, .array,
            [(nil, #"{"applePie":{}}"#), (nil, #"{"chocolateCake":{}}"#)]),
        FixtureFile("empty", "[]", nil, []),
    ]
}

struct FixtureFile: Sendable, CustomTestStringConvertible {
    let name: String
    let text: String
    let format: SceneFormat?
    /// Root first: (tag, item JSON).
    let expected: [(String?, String)]

    init(_ name: String, _ text: String, _ format: SceneFormat?, _ expected: [(String?, String)]) {
        self.name = name
        self.text = text
        self.format = format
        self.expected = expected
    }

    var bytes: [UInt8] { Array(text.utf8) }

    var testDescription: String { name }

    func expectedPath() throws -> [Element] {
        try expected.map { try element($0.0, $0.1) }
    }
}

// MARK: - Helpers

func utf8(_ text: String) -> [UInt8] { Array(text.utf8) }

func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

/// A scene ID that the test requires to be valid.
func sceneID(_ raw: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> SceneID {
    try #require(SceneID(raw), sourceLocation: sourceLocation)
}

/// An element from its tag and item JSON text (validated).
func element(_ tag: String?, _ json: String) throws -> Element {
    try Element(tag: tag, json: Array(json.utf8))
}

/// An element from a JSON literal the test controls, without validation (for non-throwing contexts).
func raw(_ tag: String?, _ json: String) -> Element {
    Element(tag: tag, item: Array(json.utf8))
}

func typed(_ tag: String, _ json: String) throws -> Element { try element(tag, json) }

func untyped(_ json: String) throws -> Element { try element(nil, json) }

/// Parses a JSON text the test requires to be valid.
func parseJSON(_ bytes: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) throws -> JSONValue {
    do {
        return try JSONParser.parse(bytes)
    } catch {
        Issue.record("not JSON (\(error)): \(text(bytes))", sourceLocation: sourceLocation)
        throw error
    }
}

/// The bytes with `count` `[` then `count` `]`: `count` levels of arrays.
func nestedArrays(_ count: Int, inner: String = "") -> String {
    String(repeating: "[", count: count) + inner + String(repeating: "]", count: count)
}

/// `count` levels of objects `{"a":{"a":…}}`.
func nestedObjects(_ count: Int) -> String {
    String(repeating: #"{"a":"#, count: count - 1) + "{}" + String(repeating: "}", count: count - 1)
}

/// The error a throwing closure throws, typed.
func caught<E: Error, T>(_ type: E.Type, _ body: () throws(E) -> T) -> E? {
    do {
        _ = try body()
        return nil
    } catch {
        return error
    }
}
