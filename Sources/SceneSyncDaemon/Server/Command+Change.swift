import SceneSyncCore

extension Command {
    /// `set` and `push`, the requests an app sends with every navigation, read in one pass over the line: each member
    /// found by its key's bytes, with no string per key and no table; the id, op, scene, format and `if_version`
    /// read from their bytes; the path's elements taken straight to their stored bytes.
    ///
    /// `nil` for any other request, and for anything this path does not read as written (an escaped key or value,
    /// a number that is not plain digits, any error): ``parse(_:)`` then parses the line as it parses every other
    /// request. So this path only ever gives the answer that one would give, and every error is that one's.
    static func parseChange(_ line: [UInt8]) -> Request? {
        var members = ChangeMembers()
        do throws(JSONError) {
            try JSONParser.forEachMember(ofObject: line) { member in members.note(member, in: line) }
        } catch {
            return nil
        }
        guard !members.hasEscapedKey, let op = members.op, let sceneSpan = members.scene,
            let sceneName = Self.plainString(line, sceneSpan), let scene = SceneID(sceneName)
        else { return nil }
        do throws(NotPlain) {
            let id = try Self.plainScalar(line, members.id)
            let ifVersion = try Self.plainUInt(line, members.ifVersion)
            let operation: SceneStore.Operation
            switch op {
            case .set:
                guard let pathSpan = members.path else { return nil }
                let format = try Self.plainFormat(line, members.format)
                operation = .set(path: try Self.path(line, pathSpan), format: format)
            case .push:
                guard let elementsSpan = members.elements else { return nil }
                operation = .push(try Self.path(line, elementsSpan))
            }
            return Request(id: id, command: .change(operation, scene, ifVersion: ifVersion))
        } catch {
            return nil
        }
    }

    /// A member this path does not read as written: the general path reads the line instead.
    private struct NotPlain: Error {}

    private static func path(_ line: [UInt8], _ span: Range<Int>) throws(NotPlain) -> [Element] {
        do throws(SceneSyncError) {
            return try Wire.decodePath(line, span: span)
        } catch {
            throw NotPlain()
        }
    }

    /// The members of a `set` or `push` request, as spans of the line; the last of a repeated key wins, as in
    /// ``JSONObject``.
    private struct ChangeMembers {
        enum Op { case set, push }

        var id: Range<Int>? = nil
        var op: Op? = nil
        var scene: Range<Int>? = nil
        var path: Range<Int>? = nil
        var elements: Range<Int>? = nil
        var format: Range<Int>? = nil
        var ifVersion: Range<Int>? = nil
        var hasEscapedKey = false

        mutating func note(_ member: JSONParser.Member, in line: [UInt8]) {
            guard !member.keyIsEscaped else {
                hasEscapedKey = true
                return
            }
            let key = line[member.key]
            let value = member.value
            if key.spells("id") {
                id = value
            } else if key.spells("op") {
                let text = line[value]
                op = text.spells(#""set""#) ? .set : text.spells(#""push""#) ? .push : nil
            } else if key.spells("scene") {
                scene = value
            } else if key.spells("path") {
                path = value
            } else if key.spells("elements") {
                elements = value
            } else if key.spells("format") {
                format = value
            } else if key.spells("if_version") {
                ifVersion = value
            }
        }
    }

    /// A string value without escapes, as its text.
    private static func plainString(_ line: [UInt8], _ span: Range<Int>) -> String? {
        JSONParser.unescapedText(line, span).flatMap(UTF8Text.string)
    }

    /// The id as it is echoed (`null` when there is none). A scalar's own bytes are its serialization when it is a
    /// number, a literal, or a string without escapes (the line was checked, so its UTF-8 is valid, and only
    /// escapes are rewritten); anything else is left to the general path.
    private static func plainScalar(_ line: [UInt8], _ span: Range<Int>?) throws(NotPlain) -> [UInt8] {
        guard let span else { return ResponseWriter.nullID }
        switch line[span.lowerBound] {
        case UInt8(ascii: "["), UInt8(ascii: "{"): throw NotPlain()
        case UInt8(ascii: "\""):
            guard JSONParser.unescapedText(line, span) != nil else { throw NotPlain() }
            return Array(line[span])
        default: return Array(line[span])
        }
    }

    /// `if_version`: absent or `null`, or plain digits that fit.
    private static func plainUInt(_ line: [UInt8], _ span: Range<Int>?) throws(NotPlain) -> UInt64? {
        guard let span, !line[span].spells("null") else { return nil }
        guard let value = JSONParser.digitsValue(line, span) else { throw NotPlain() }
        return value
    }

    /// `format`: absent or `null`, `"codable"` or `"array"`.
    private static func plainFormat(_ line: [UInt8], _ span: Range<Int>?) throws(NotPlain) -> SceneFormat? {
        guard let span, !line[span].spells("null") else { return nil }
        guard let name = plainString(line, span), let format = SceneFormat(rawValue: name) else { throw NotPlain() }
        return format
    }
}
