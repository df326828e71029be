import SceneSyncCore
import SceneSyncTestKit
import Testing

@testable import SceneSyncDaemon

/// The one-pass reading of `set` and `push` gives what the general request parser gives, or leaves the line to it.
@Suite struct CommandChangeParseTests {
    /// The lines apps send: read by the one-pass path, and read as the general parser reads them.
    @Test(arguments: [
        #"{"id":1,"op":"set","scene":"main","path":[{"type":"R","value":"{\"id\":1}"}]}"#,
        #"{"op":"set","scene":"main","path":[],"format":"codable","if_version":7,"id":"a-b"}"#,
        #"{"id":null,"op":"push","scene":"w-1","elements":[{"type":"R","value":{"b":1,"a":[true,null]}}]}"#,
        #" { "id" : -2.5e3 , "op" : "set" , "scene" : "main" , "path" : [ { "value" : 3 } ] , "format" : null } "#,
        #"{"id":true,"op":"set","scene":"main","path":[{"value":"ü"}],"if_version":null,"extra":{"x":[1]}}"#,
        #"{"op":"push","scene":"main","elements":[{"value":1}],"op":"set","path":[{"value":2}]}"#,
    ])
    func commonLinesTakeTheOnePassPath(_ text: String) throws {
        let line = Array(text.utf8)
        let change = try #require(Command.parseChange(line))
        try Self.expectSame(change, Command.parseAnyRequest(line), text)
    }

    /// Lines the one-pass path must leave to the general parser, which answers each with its own error or value.
    @Test(arguments: [
        #"{"id":1,"op":"get","scene":"main"}"#,
        #"{"id":1,"op":"set","scene":"main"}"#,
        #"{"id":1,"op":"push","scene":"main","path":[]}"#,
        #"{"id":[1],"op":"set","scene":"main","path":[]}"#,
        #"{"id":"\u0041","op":"set","scene":"main","path":[]}"#,
        #"{"id":1,"op":"s\u0065t","scene":"main","path":[]}"#,
        #"{"id":1,"p\u0061th":[],"op":"set","scene":"main"}"#,
        #"{"id":1,"op":"set","scene":"ma\u0069n","path":[]}"#,
        #"{"id":1,"op":"set","scene":"bad/id","path":[]}"#,
        #"{"id":1,"op":"set","scene":"main","path":[],"if_version":1.0}"#,
        #"{"id":1,"op":"set","scene":"main","path":[],"if_version":99999999999999999999}"#,
        #"{"id":1,"op":"set","scene":"main","path":[],"if_version":-1}"#,
        #"{"id":1,"op":"set","scene":"main","path":[],"format":"yaml"}"#,
        #"{"id":1,"op":"set","scene":"main","path":{}}"#,
        #"{"id":1,"op":"set","scene":"main","path":[{"type":"","value":1}]}"#,
        #"{"id":1,"op":"set","scene":"main","path":[1]}"#,
        #"{"id":1,"op":"set","scene":"main","path":[]"#,
        #"{"id":1,"op":"set","scene":"main","path":[]} x"#,
        #"[1]"#,
    ])
    func otherLinesAreLeftToTheGeneralParser(_ text: String) {
        #expect(Command.parseChange(Array(text.utf8)) == nil, "\(text)")
    }

    /// Random lines built from the members a change has, their usual and unusual spellings, repeats, unknown
    /// members and damage: whenever the one-pass path reads one, the general parser reads it the same way.
    @Test(arguments: 0..<8)
    func randomLinesReadTheSameEitherWay(seed: Int) throws {
        var random = SplitMix64(seed: UInt64(seed))
        var read = 0
        for _ in 0..<2_000 {
            let text = Self.randomLine(&random)
            let line = Array(text.utf8)
            guard let change = Command.parseChange(line) else { continue }
            read += 1
            try Self.expectSame(change, Command.parseAnyRequest(line), text)
        }
        #expect(read > 100, "the one-pass path read \(read) lines of 2,000")
    }

    /// Each member with how often a line has it, and its values, the usual ones first.
    static let members: [(key: String, percent: Int, values: [String])] = [
        ("id", 80, ["1", "0", "-3", "2.5e1", #""x""#, #""\u00e9""#, "null", "true", "[1]", #"{"a":1}"#]),
        ("op", 97, [#""set""#, #""set""#, #""push""#, #""push""#, #""get""#, #""s\u0065t""#, "1"]),
        ("scene", 97, [#""main""#, #""main""#, #""w-1.a_b""#, #""bad/id""#, #""""#, #""m\u0061in""#, "3"]),
        (
            "path", 80,
            [
                "[]", #"[{"type":"R","value":"{\"id\":1}"}]"#, #"[{"value":[1,{"b":2,"a":1}]}]"#,
                #"[{"type":"R","value":1},{"value":2}]"#, #"[{"type":"","value":1}]"#, #"[{"type":"R"}]"#, "[1]",
                "{}", #"[{"type":"R","value":"\u00e9 \n"}]"#, #"[{"value":1.50}]"#,
            ]
        ),
        ("elements", 40, [#"[{"type":"R","value":{"k":"v"}}]"#, #"[{"value":"a"}]"#, "[]", "null"]),
        ("format", 40, ["null", #""codable""#, #""array""#, #""yaml""#, "1"]),
        ("if_version", 40, ["null", "0", "42", "18446744073709551615", "18446744073709551616", "-1", "1e2", #""1""#]),
        ("to_root", 10, ["true"]),
        ("p\\u0061th", 3, ["[]"]),
        ("unknown", 20, [#"{"deep":[[[]]]}"#, "null"]),
    ]

    static func randomLine(_ random: inout SplitMix64) -> String {
        var parts: [String] = []
        for member in members where random.chance(member.percent) {
            let usual = member.values[random.below(min(2, member.values.count))]
            parts.append("\"\(member.key)\":" + (random.chance(75) ? usual : random.pick(member.values)))
        }
        if random.chance(10), let repeated = parts.randomElement(using: &random) { parts.append(repeated) }
        parts.shuffle(using: &random)
        let space = random.chance(20) ? " " : ""
        var line = "{" + space + parts.joined(separator: "," + space) + space + "}"
        if random.chance(5) { line.removeLast() }
        if random.chance(3) { line += "x" }
        return line
    }

    static func expectSame(
        _ change: Request, _ general: Result<Request, RequestError>, _ text: String
    ) throws {
        let other = try #require(try? general.get(), "\(text)")
        #expect(change.id == other.id, "\(text)")
        guard case .change(let operation, let scene, let ifVersion) = change.command,
            case .change(let otherOperation, let otherScene, let otherIfVersion) = other.command
        else {
            Issue.record("not both changes: \(text)")
            return
        }
        #expect(operation == otherOperation, "\(text)")
        #expect(scene == otherScene, "\(text)")
        #expect(ifVersion == otherIfVersion, "\(text)")
    }
}
