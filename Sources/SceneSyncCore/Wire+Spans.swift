extension Wire {
    /// ``decodePath(_:)`` for the path at `span` of a request line whose syntax has been checked already: each
    /// element's value goes straight to its stored bytes, without a tree that is serialized again. The answers,
    /// errors included, are those of ``decodePath(_:)``.
    public static func decodePath(_ bytes: [UInt8], span: Range<Int>) throws(SceneSyncError) -> [Element] {
        // The syntax was checked: what these `try?` catch is a wrong shape, named as `decodePath(_:)` names it.
        guard bytes[span].first == UInt8(ascii: "["),
            let spans = try? JSONParser.elementSpans(of: bytes, in: span, validated: true)
        else { throw .badRequest("path must be an array of elements") }
        // Every element's record goes into one storage, as a scene holds its path: no storage per element, and
        // none to pack them into afterwards.
        var builder = ElementStorage.Builder()
        builder.reserve(span.count + 4 * spans.count)
        for (index, elementSpan) in spans.enumerated() {
            guard bytes[elementSpan].first == UInt8(ascii: "{") else {
                throw .badRequest("element \(index) must be an object")
            }
            let (typeMember, valueMember) = typeAndValue(bytes, elementSpan)
            guard let valueSpan = valueMember else { throw .badRequest("element \(index) has no value") }
            var tag: ArraySlice<UInt8>? = nil
            if let typeSpan = typeMember {
                tag = JSONParser.unescapedText(bytes, typeSpan)
                if tag == nil {
                    // As above: a `type` that does not parse is no string either.
                    guard let string = try? JSONParser.parse(bytes, in: typeSpan).stringValue else {
                        throw .badRequest("element \(index): type must be a non-empty string")
                    }
                    tag = Array(string.utf8)[...]
                }
                guard tag?.isEmpty == false else {
                    throw .badRequest("element \(index): type must be a non-empty string")
                }
            }
            let item: [UInt8]
            if let compact = compactItem(bytes, valueSpan) {
                item = compact
            } else {
                do throws(JSONError) {
                    item = try JSONParser.parse(bytes, in: valueSpan).serialized()
                } catch {
                    throw .badRequest("element \(index): \(error)")
                }
            }
            builder.append(tag: tag, item: item[...], literal: nil)
        }
        return spans.isEmpty ? [] : ElementStorage.make(builder).elements
    }

    /// The spans of an element's `type` and `value` members (the last of a repeated key), read by their keys'
    /// bytes; an element with an escaped key is read by its keys' text instead.
    private static func typeAndValue(_ bytes: [UInt8], _ span: Range<Int>) -> (Range<Int>?, Range<Int>?) {
        var found: (type: Range<Int>?, value: Range<Int>?) = (nil, nil)
        var escaped = false
        JSONParser.forEachMember(ofValidatedObject: bytes, in: span) { member in
            let key = bytes[member.key]
            if member.keyIsEscaped {
                escaped = true
            } else if key.spells("type") {
                found.type = member.value
            } else if key.spells("value") {
                found.value = member.value
            }
        }
        guard escaped else { return found }
        // Validated already: only an object whose keys are escaped gets here, and it reads.
        return (try? JSONParser.memberSpans(of: bytes, in: span, named: "type", "value", validated: true)) ?? (nil, nil)
    }

    /// The bytes `JSONValue.serialized()` would give for the valid JSON at `span`, when they are its bytes without
    /// whitespace: ASCII without escapes (escapes and other UTF-8 are rewritten by serializing) and objects without
    /// a repeated key (serializing keeps the last value). `nil` otherwise: the caller parses and serializes.
    ///
    /// The keys of the open objects are kept on the stack, so the result is the only allocation: this runs for every
    /// element of every `set`. An item with more keys open at once than ``compactKeys``, or nested deeper than
    /// ``compactDepth``, is left to the caller too.
    static func compactItem(_ bytes: [UInt8], _ span: Range<Int>) -> [UInt8]? {
        withUnsafeTemporaryAllocation(of: Range<Int>.self, capacity: compactKeys) { keys in
            withUnsafeTemporaryAllocation(of: Int.self, capacity: compactDepth) { opened in
                compactItem(bytes, span, keys: keys, opened: opened)
            }
        }
    }

    static let compactKeys = 64
    static let compactDepth = 32

    /// `keys`: the keys of the open objects, innermost last. `opened`: per open container, where its keys begin in
    /// `keys`, or -1 for an array.
    private static func compactItem(
        _ bytes: [UInt8], _ span: Range<Int>, keys: UnsafeMutableBufferPointer<Range<Int>>,
        opened: UnsafeMutableBufferPointer<Int>
    ) -> [UInt8]? {
        var out: [UInt8] = []
        out.reserveCapacity(span.count)
        var keyCount = 0
        var depth = 0
        var expectKey = false
        var index = span.lowerBound
        while index < span.upperBound {
            let byte = bytes[index]
            guard byte < 0x80, byte != UInt8(ascii: "\\") else { return nil }
            switch byte {
            case 0x20, 0x09, 0x0A, 0x0D:
                index += 1
                continue
            case UInt8(ascii: "\""):
                var close = index + 1
                while close < span.upperBound, bytes[close] != UInt8(ascii: "\"") {
                    guard bytes[close] < 0x80, bytes[close] != UInt8(ascii: "\\") else { return nil }
                    close += 1
                }
                guard close < span.upperBound else { return nil }
                if expectKey {
                    let key = (index + 1)..<close
                    let first = opened[depth - 1]
                    for seen in keys[first..<keyCount] where bytes[seen].elementsEqual(bytes[key]) { return nil }
                    guard keyCount < keys.count else { return nil }
                    keys[keyCount] = key
                    keyCount += 1
                    expectKey = false
                }
                out.append(contentsOf: bytes[index...close])
                index = close + 1
                continue
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                guard depth < opened.count else { return nil }
                opened[depth] = byte == UInt8(ascii: "{") ? keyCount : -1
                depth += 1
                expectKey = byte == UInt8(ascii: "{")
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                guard depth > 0 else { return nil }
                depth -= 1
                if opened[depth] >= 0 { keyCount = opened[depth] }
                expectKey = false
            case UInt8(ascii: ","):
                expectKey = depth > 0 && opened[depth - 1] >= 0
            default:
                break
            }
            out.append(byte)
            index += 1
        }
        return out
    }
}
