extension JSONParser {
    /// One member of an object, by the spans of its key and its value.
    public struct Member {
        /// The key's text between its quotes, as written.
        public let key: Range<Int>
        /// The key's text holds an escape, so its bytes are not the key.
        public let keyIsEscaped: Bool
        /// The value, as written.
        public let value: Range<Int>
    }

    /// Hands each member of the JSON object that is all of `bytes` (whitespace around it allowed) to `body`, and
    /// checks the whole text in the same pass, as ``validate(_:maxNesting:)`` would.
    ///
    /// Keys are handed over as the spans of their bytes, not as strings: the daemon reads a request line's few known
    /// members by comparing bytes, where a `String` per key and a table of every member cost more than the rest of
    /// its parse.
    public static func forEachMember(
        ofObject bytes: [UInt8], maxNesting: Int = JSONParser.defaultMaxNesting, _ body: (Member) -> Void
    ) throws(JSONError) {
        var parser = JSONParser(bytes, maxNesting: maxNesting)
        parser.skipWhitespace()
        parser.index = try forEachMember(of: &parser, validated: false, body)
        try parser.expectEnd()
    }

    /// ``forEachMember(ofObject:maxNesting:_:)`` for the object at `range` of a text that was validated already: its
    /// values are only skipped to their ends. For a request's path elements, once the line was checked whole.
    public static func forEachMember(
        ofValidatedObject bytes: [UInt8], in range: Range<Int>, _ body: (Member) -> Void
    ) {
        var parser = JSONParser(bytes, maxNesting: Snapshot.snapshotNesting)
        parser.index = range.lowerBound
        parser.skipWhitespace()
        // Validated already: nothing here can throw.
        _ = try? forEachMember(of: &parser, validated: true, body)
    }

    /// Walks the object at the parser's index; returns where it ends. Its keys and syntax are checked; its values
    /// too unless `validated`. `reads(member's key, parser)` is asked before each value is skipped, with the parser
    /// at the value: it may read the value itself, leave the parser right after it and return `true` (a restore
    /// decodes a snapshot's scenes there, and skips a scene's content unchecked, which it checks as a scene file);
    /// `false` has the value skipped here. It may throw.
    static func forEachMember(
        of parser: inout JSONParser, validated: Bool,
        reads: (_ key: Range<Int>, _ keyIsEscaped: Bool, _ parser: inout JSONParser) throws(JSONError) -> Bool = {
            _, _, _ in false
        },
        _ body: (Member) -> Void
    ) throws(JSONError) -> Int {
        try parser.expect(UInt8(ascii: "{"), "an object")
        parser.skipWhitespace()
        if parser.peek() == UInt8(ascii: "}") { return parser.index + 1 }
        while true {
            parser.skipWhitespace()
            let keyStart = parser.index + 1
            // Keys are checked even in a `validated` walk: a snapshot's restore checks only the object's own syntax
            // here, and each value where it decodes it.
            guard parser.peek() == UInt8(ascii: "\"") else { throw parser.unexpected("expected an object key") }
            try parser.skipString()
            let key = keyStart..<(parser.index - 1)
            let keyIsEscaped = parser.bytes[key].contains(UInt8(ascii: "\\"))
            parser.skipWhitespace()
            try parser.expect(UInt8(ascii: ":"), "':'")
            parser.skipWhitespace()
            let start = parser.index
            if try !reads(key, keyIsEscaped, &parser) { try parser.skipValue(depth: 1, validated: validated) }
            body(Member(key: key, keyIsEscaped: keyIsEscaped, value: start..<parser.index))
            parser.skipWhitespace()
            if parser.peek() == UInt8(ascii: ",") {
                parser.index += 1
                continue
            }
            try parser.expect(UInt8(ascii: "}"), "'}'")
            return parser.index
        }
    }
}
