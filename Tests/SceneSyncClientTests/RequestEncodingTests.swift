import SceneSyncClient
import SceneSyncCore
import Testing

/// Every request the library builds, decoded back as the daemon would see it.
@Suite struct RequestEncodingTests {
    private func decoded(_ request: SceneSyncRequest, id: UInt64 = 7) throws -> JSONValue {
        let line = request.line(id: id)
        #expect(line.last == UInt8(ascii: "\n"))
        #expect(line.dropLast().contains(UInt8(ascii: "\n")) == false)
        return try JSONParser.parse(Array(line.dropLast()))
    }

    private func json(_ text: String) throws -> JSONValue {
        try JSONParser.parse(Array(text.utf8))
    }

    @Test func idAndOpComeFirst() throws {
        let line = String(decoding: SceneSyncRequest.get("main").line(id: 42), as: UTF8.self)
        #expect(line == #"{"id":42,"op":"get","scene":"main"}"# + "\n")
    }

    @Test func simpleOps() throws {
        for (request, op) in [
            (SceneSyncRequest.list, "list"), (.sync, "sync"), (.snapshot, "snapshot"), (.reload, "reload"),
            (.stats, "stats"),
        ] {
            #expect(try decoded(request) == json(#"{"id":7,"op":"\#(op)"}"#))
        }
    }

    @Test func hello() throws {
        #expect(try decoded(.hello(client: "my app")) == json(#"{"id":7,"op":"hello","client":"my app"}"#))
        #expect(try decoded(.hello(client: nil)) == json(#"{"id":7,"op":"hello"}"#))
    }

    @Test func setCarriesPathFormatAndVersion() throws {
        let path = [
            Element(tag: "MyApp.Recipe", value: try json(#"{"applePie":{}}"#)),
            Element(tag: "Swift.Int", value: try json("42")),
        ]
        #expect(
            try decoded(.set("s1", path: path, format: .codable, ifVersion: 3))
                == json(
                    #"""
                    {"id":7,"op":"set","scene":"s1","format":"codable","if_version":3,
                     "path":[{"type":"MyApp.Recipe","value":{"applePie":{}}},{"type":"Swift.Int","value":42}]}
                    """#))
        #expect(try decoded(.set("s1", path: [])) == json(#"{"id":7,"op":"set","scene":"s1","path":[]}"#))
    }

    @Test func elementBytesTravelUnchanged() throws {
        // Number spelling and escapes are the app's: the request must not respell them.
        let element = try Element(tag: nil, json: Array(#"{"n":1.50,"s":"\u00e9"}"#.utf8))
        let line = String(decoding: SceneSyncRequest.push("s", elements: [element]).line(id: 1), as: UTF8.self)
        #expect(line.contains(#"{"value":{"n":1.50,"s":"\u00e9"}}"#))
    }

    @Test func pushPopDelete() throws {
        let elements = [Element(tag: nil, value: .number(JSONNumber(UInt64(1))))]
        #expect(
            try decoded(.push("s", elements: elements, ifVersion: 0))
                == json(#"{"id":7,"op":"push","scene":"s","elements":[{"value":1}],"if_version":0}"#))
        #expect(try decoded(.pop("s")) == json(#"{"id":7,"op":"pop","scene":"s","count":1}"#))
        #expect(
            try decoded(.pop("s", count: 3, ifVersion: 9))
                == json(#"{"id":7,"op":"pop","scene":"s","count":3,"if_version":9}"#))
        #expect(try decoded(.popToRoot("s")) == json(#"{"id":7,"op":"pop","scene":"s","to_root":true}"#))
        #expect(try decoded(.delete("s")) == json(#"{"id":7,"op":"delete","scene":"s"}"#))
        #expect(
            try decoded(.delete("s", ifVersion: 2)) == json(#"{"id":7,"op":"delete","scene":"s","if_version":2}"#))
    }

    @Test func subscribe() throws {
        #expect(try decoded(.subscribe()) == json(#"{"id":7,"op":"subscribe"}"#))
        #expect(
            try decoded(.subscribe(patterns: ["main*", "doc-[0-9]"], since: Clock(epoch: "e1", revision: 41)))
                == json(
                    #"{"id":7,"op":"subscribe","scenes":["main*","doc-[0-9]"],"since":{"epoch":"e1","revision":41}}"#
                ))
        #expect(try decoded(.subscribe(initial: false)) == json(#"{"id":7,"op":"subscribe","initial":false}"#))
        #expect(try decoded(.unsubscribe(5)) == json(#"{"id":7,"op":"unsubscribe","subscription":5}"#))
    }

    @Test func historyAndPhase() throws {
        #expect(try decoded(.history("s")) == json(#"{"id":7,"op":"history","scene":"s"}"#))
        #expect(try decoded(.history("s", limit: 10)) == json(#"{"id":7,"op":"history","scene":"s","limit":10}"#))
        for phase in ScenePhase.allCases {
            #expect(
                try decoded(.phase("s", phase))
                    == json(#"{"id":7,"op":"phase","scene":"s","phase":"\#(phase.rawValue)"}"#))
        }
    }

    @Test func stringsAreEscaped() throws {
        let request = SceneSyncRequest.get("a\"b\\c\nd")
        #expect(try decoded(request)["scene"]?.stringValue == "a\"b\\c\nd")
    }

    @Test func customOps() throws {
        let request = SceneSyncRequest(op: "future", fields: [("x", .bool(true)), ("y", .string("z"))])
        #expect(try decoded(request) == json(#"{"id":7,"op":"future","x":true,"y":"z"}"#))
        #expect(request.description == #"{"id":0,"op":"future","x":true,"y":"z"}"#)
    }
}
