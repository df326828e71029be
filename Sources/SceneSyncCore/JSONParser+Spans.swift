extension JSONParser {
    /// The byte range of each member value of the JSON object that is all of `bytes` (whitespace around it
    /// allowed): the whole text is checked in the same pass, as ``validate(_:maxNesting:)`` would. A repeated key
    /// keeps its last value, as in ``JSONObject``.
    public static func objectMemberSpans(
        of bytes: [UInt8], maxNesting: Int = JSONParser.defaultMaxNesting
    ) throws(JSONError) -> [String: Range<Int>] {
        var spans: [String: Range<Int>] = [:]
        var parser = JSONParser(bytes, maxNesting: maxNesting)
        parser.index = try walkMembers(of: bytes, in: 0..<bytes.count, maxNesting: maxNesting, validated: false) {
            key, span in spans[key] = span
        }
        try parser.expectEnd()
        return spans
    }

    /// The spans of two members of the object at `range`, found as ``objectMemberSpans(of:maxNesting:)`` finds them
    /// (a repeated key keeps its last value), without a table of every member: for each element of a request's path.
    static func memberSpans(
        of bytes: [UInt8], in range: Range<Int>, named first: String, _ second: String, validated: Bool = false
    ) throws(JSONError) -> (Range<Int>?, Range<Int>?) {
        var found: (Range<Int>?, Range<Int>?) = (nil, nil)
        _ = try walkMembers(of: bytes, in: range, maxNesting: Snapshot.snapshotNesting, validated: validated) {
            key, span in
            if key == first { found.0 = span } else if key == second { found.1 = span }
        }
        return found
    }

    /// The spans of the members named `keys` of the object that starts at `start`, in the order of `keys`, and where
    /// the object ends, found as ``objectMemberSpans(of:maxNesting:)`` finds them, each value checked as it is
    /// skipped, without a table of every member: a snapshot's restore reads seven members of each of a hundred
    /// thousand scenes, and building and hashing a table for each was a tenth of it.
    ///
    /// The value of the member `checkedByCaller` is only skipped to its end, not checked: the caller checks it
    /// whole (a restore decodes each scene's `content` as a scene file, which checks every byte), and checking it
    /// here too was a second pass over most of a snapshot's bytes. Damaged, it still fails: where its end is not
    /// where the caller's check ends, or where the rest of the object no longer reads. A second member of that name
    /// is refused: it would be read in place of the first, which nothing would then have checked.
    ///
    /// Keys are compared as bytes: a `String` for each key of each scene was most of this walk's cost.
    static func memberSpans(
        of bytes: [UInt8], objectAt start: Int, named keys: MemberNames, checkedByCaller: Int? = nil
    ) throws(JSONError) -> (spans: [Range<Int>?], end: Int) {
        var found = [Range<Int>?](repeating: nil, count: keys.count)
        var parser = JSONParser(bytes, maxNesting: Snapshot.snapshotNesting)
        parser.index = start
        var trustedSeen = false
        let end = try forEachMember(
            of: &parser, validated: false,
            reads: { (key, keyIsEscaped, parser) throws(JSONError) -> Bool in
                guard let checkedByCaller, keys.slot(bytes, key, isEscaped: keyIsEscaped) == checkedByCaller else {
                    return false
                }
                // A second one would be read in place of the first, which then no one checked: refused instead.
                guard !trustedSeen else { throw parser.unexpected("a single \(keys.names[checkedByCaller]) member") }
                trustedSeen = true
                try parser.skipValue(depth: 1, validated: true)
                return true
            }
        ) { member in
            if let slot = keys.slot(bytes, member.key, isEscaped: member.keyIsEscaped) { found[slot] = member.value }
        }
        return (found, end)
    }

    /// Hands each member of the object at `range` to `body`, its key and the span of its value (each value checked
    /// as it is skipped, unless the text was `validated` already). Returns where the object ends.
    private static func walkMembers(
        of bytes: [UInt8], in range: Range<Int>, maxNesting: Int, validated: Bool,
        _ body: (String, Range<Int>) -> Void
    ) throws(JSONError) -> Int {
        var parser = JSONParser(bytes, maxNesting: maxNesting)
        parser.index = range.lowerBound
        parser.skipWhitespace()
        return try forEachMember(of: &parser, validated: validated) { member in
            body(Self.key(bytes, member.key, isEscaped: member.keyIsEscaped), member.value)
        }
    }

    /// The member names a walk looks for, kept as their UTF-8 bytes too.
    struct MemberNames: Sendable {
        let names: [String]
        private let utf8: [[UInt8]]

        init(_ names: [String]) {
            self.names = names
            utf8 = names.map { Array($0.utf8) }
        }

        var count: Int { names.count }

        /// The index of the name the key at `span` of `bytes` is, or `nil`.
        func slot(_ bytes: [UInt8], _ span: Range<Int>, isEscaped: Bool) -> Int? {
            if isEscaped { return names.firstIndex(of: JSONParser.unescape(bytes[span])) }
            return utf8.firstIndex { $0.elementsEqual(bytes[span]) }
        }
    }

    /// A key's text, from the span of its bytes between the quotes.
    static func key(_ bytes: [UInt8], _ span: Range<Int>, isEscaped: Bool) -> String {
        isEscaped ? unescape(bytes[span]) : String(decoding: bytes[span], as: UTF8.self)
    }

    /// The value at `span` of `bytes`, a span found by the functions above, parsed in place (with the nesting
    /// counted from the value itself, as ``parse(_:maxNesting:)`` of a copy of those bytes would).
    public static func parse(
        _ bytes: [UInt8], in span: Range<Int>, maxNesting: Int = JSONParser.defaultMaxNesting
    ) throws(JSONError) -> JSONValue {
        var parser = JSONParser(bytes, maxNesting: maxNesting)
        parser.index = span.lowerBound
        parser.skipWhitespace()
        let value = try parser.parseValue(depth: 0)
        let rest = bytes[min(parser.index, span.upperBound)..<span.upperBound]
        guard parser.index <= span.upperBound, rest.allSatisfy({ [0x20, 0x09, 0x0A, 0x0D].contains($0) }) else {
            throw parser.unexpected("the end of the value")
        }
        return value
    }

    /// The byte range of each element of the array at `range` (already validated).
    static func elementSpans(
        of bytes: [UInt8], in range: Range<Int>, validated: Bool = false
    ) throws(JSONError) -> [Range<Int>] {
        var parser = JSONParser(bytes, maxNesting: Snapshot.snapshotNesting)
        parser.index = range.lowerBound
        parser.skipWhitespace()
        try parser.expect(UInt8(ascii: "["), "an array")
        var spans: [Range<Int>] = []
        parser.skipWhitespace()
        if parser.peek() == UInt8(ascii: "]") { return spans }
        while true {
            parser.skipWhitespace()
            let start = parser.index
            try parser.skipValue(depth: 1, validated: validated)
            spans.append(start..<parser.index)
            parser.skipWhitespace()
            if parser.peek() == UInt8(ascii: ",") {
                parser.index += 1
                continue
            }
            try parser.expect(UInt8(ascii: "]"), "']'")
            return spans
        }
    }
}
