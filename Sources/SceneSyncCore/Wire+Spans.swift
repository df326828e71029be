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
            } else if key.elementsEqual("type".utf8) {
                found.type = member.value
            } else if key.elementsEqual("value".utf8) {
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
    static func compactItem(_ bytes: [UInt8], _ span: Range<Int>) -> [UInt8]? {
        var out: [UInt8] = []
        out.reserveCapacity(span.count)
        /// Per open container: the keys seen so far, or `nil` for an array.
        var keys: [[Range<Int>]?] = []
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
                if expectKey, let last = keys.indices.last, var seen = keys[last] {
                    let key = (index + 1)..<close
                    if seen.contains(where: { bytes[$0].elementsEqual(bytes[key]) }) { return nil }
                    seen.append(key)
                    keys[last] = seen
                    expectKey = false
                }
                out.append(contentsOf: bytes[index...close])
                index = close + 1
                continue
            case UInt8(ascii: "{"):
                keys.append([])
                expectKey = true
            case UInt8(ascii: "["):
                keys.append(nil)
                expectKey = false
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                guard !keys.isEmpty else { return nil }
                keys.removeLast()
                expectKey = false
            case UInt8(ascii: ","):
                expectKey = keys.last.map { $0 != nil } ?? false
            default:
                break
            }
            out.append(byte)
            index += 1
        }
        return out
    }
}
