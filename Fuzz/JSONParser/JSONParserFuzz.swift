@testable import SceneSyncCore

/// libFuzzer harness for ``JSONParser``: every byte string is either refused or parsed into a value that survives
/// the project's own writers unchanged.
///
/// The parser sits in front of every untrusted input (scene files, request lines, snapshots), so besides "never
/// crash" the harness checks what the rest of the code relies on: the tree parser and the validating skipper agree,
/// the nesting limit of §3/§6 holds exactly, and compact output (``JSONValue/serialized()``,
/// ``JSONWriter/appendCompact(_:to:)``, the wire form of an element) parses back to an equal value.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJSONParser(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    checkJSONText(fuzzInput(data, size))
    return 0
}

func checkJSONText(_ bytes: [UInt8]) {
    let value: JSONValue
    do throws(JSONError) {
        value = try JSONParser.parse(bytes)
    } catch {
        checkRefused(bytes, error)
        return
    }
    let depth = textualNesting(bytes)
    require(depth <= JSONParser.defaultMaxNesting, "accepted nesting \(depth): \(show(bytes))")
    require(treeNesting(value) <= depth, "tree deeper than its text: \(show(bytes))")
    checkValidates(bytes, maxNesting: JSONParser.defaultMaxNesting, "validate refused what parse accepts")

    // The limit is exact: the text's own depth passes, one less is `tooDeep` for both parsers.
    if depth > 0 {
        checkValidates(bytes, maxNesting: depth, "validate refused at its own depth \(depth)")
        require((try? JSONParser.parse(bytes, maxNesting: depth)) != nil, "parse refused at its own depth \(depth)")
        let below = depth - 1
        require(
            parseError(bytes, maxNesting: below) == .tooDeep(limit: below),
            "parse at maxNesting \(below) of a depth-\(depth) text: \(show(bytes))")
        require(
            validateError(bytes, maxNesting: below) == .tooDeep(limit: below),
            "validate at maxNesting \(below) of a depth-\(depth) text: \(show(bytes))")
    }

    // Compact serialization is a fixpoint that parses back to an equal value with an equal hash.
    let serialized = value.serialized()
    require(!JSONWriter.hasInsignificantWhitespace(serialized), "serialized() has whitespace: \(show(serialized))")
    guard let reparsed = try? JSONParser.parse(serialized) else {
        fatalError("serialized() does not parse: \(show(serialized)) from \(show(bytes))")
    }
    require(reparsed == value, "serialized() changes the value: \(show(bytes)) -> \(show(serialized))")
    require(reparsed.hashValue == value.hashValue, "equal values hash differently: \(show(bytes))")
    require(reparsed.serialized() == serialized, "serialized() is not a fixpoint: \(show(serialized))")

    // Compacting the original text only drops whitespace outside strings.
    var compact: [UInt8] = []
    JSONWriter.appendCompact(bytes, to: &compact)
    require(
        JSONWriter.hasInsignificantWhitespace(bytes) == (compact != bytes),
        "hasInsignificantWhitespace disagrees with appendCompact: \(show(bytes))")
    require(!JSONWriter.hasInsignificantWhitespace(compact), "compact text has whitespace: \(show(compact))")
    require((try? JSONParser.parse(compact)) == value, "compacting changes the value: \(show(bytes))")

    // The same text as an element: its value, its equality with the client's spelling, its one-line wire form.
    guard let element = try? Element(tag: nil, json: bytes) else { fatalError("Element refused \(show(bytes))") }
    require(element.value == value, "Element.value differs: \(show(bytes))")
    require(element == Element(tag: nil, value: value), "Element differs from its reserialized twin: \(show(bytes))")
    var wire: [UInt8] = []
    element.appendWire(to: &wire)
    require(!wire.contains(0x0A) && !wire.contains(0x0D), "wire element spans lines: \(show(wire))")
    // The element's object is one level more than its value: protocol lines nest deeper than any value.
    let wireValue = (try? JSONParser.parse(wire, maxNesting: depth + 1))?["value"]
    require(wireValue == value, "wire element changes the value: \(show(wire))")

    checkNumbers(value)
}

/// A refused text: both parsers refuse it for the same reason, and `tooDeep` only when it really nests too deep.
func checkRefused(_ bytes: [UInt8], _ error: JSONError) {
    let skipped = validateError(bytes, maxNesting: JSONParser.defaultMaxNesting)
    require(skipped == error, "parse says \(error), validate says \(String(describing: skipped)): \(show(bytes))")
    if case .tooDeep(let limit) = error {
        require(limit == JSONParser.defaultMaxNesting, "tooDeep with limit \(limit)")
        require(textualNesting(bytes) > limit, "tooDeep for a text of depth \(textualNesting(bytes))")
    }
    if case .unexpected(let offset, _) = error {
        require(offset >= 0 && offset < bytes.count, "error offset \(offset) outside \(bytes.count) bytes")
    }
}

/// Numbers compare by exact value: an integer spelled any way equals its plain spelling, with the same hash.
func checkNumbers(_ value: JSONValue) {
    switch value {
    case .number(let number):
        if let exact = UInt64(number.text) {
            require(number.uint64Value == exact, "uint64Value of \(number.text) is not \(exact)")
        }
        if let unsigned = number.uint64Value {
            let plain = JSONNumber(unsigned)
            require(number == plain && plain == number, "\(number.text) != \(plain.text)")
            require(number.hashValue == plain.hashValue, "\(number.text) and \(plain.text) hash differently")
        }
        if let signed = value.int64Value {
            let plain = JSONNumber(signed)
            require(number == plain && plain == number, "\(number.text) != \(plain.text)")
            require(number.hashValue == plain.hashValue, "\(number.text) and \(plain.text) hash differently")
        }
    case .array(let elements):
        for element in elements { checkNumbers(element) }
    case .object(let object):
        for member in object.members { checkNumbers(member.value) }
    default:
        break
    }
}

func checkValidates(_ bytes: [UInt8], maxNesting: Int, _ what: String) {
    let error = validateError(bytes, maxNesting: maxNesting)
    require(error == nil, "\(what) (\(String(describing: error))): \(show(bytes))")
}

func validateError(_ bytes: [UInt8], maxNesting: Int) -> JSONError? {
    do throws(JSONError) {
        try JSONParser.validate(bytes, maxNesting: maxNesting)
        return nil
    } catch {
        return error
    }
}

func parseError(_ bytes: [UInt8], maxNesting: Int) -> JSONError? {
    do throws(JSONError) {
        _ = try JSONParser.parse(bytes, maxNesting: maxNesting)
        return nil
    } catch {
        return error
    }
}

/// The deepest nesting of arrays and objects in a text, counted independently of the parser: brackets outside
/// string literals. Exact for valid JSON; for a refused text, an upper bound of what the parser saw.
func textualNesting(_ bytes: [UInt8]) -> Int {
    var depth = 0
    var deepest = 0
    var inString = false
    var escaped = false
    for byte in bytes {
        if inString {
            if escaped {
                escaped = false
            } else if byte == UInt8(ascii: "\\") {
                escaped = true
            } else if byte == UInt8(ascii: "\"") {
                inString = false
            }
            continue
        }
        switch byte {
        case UInt8(ascii: "\""): inString = true
        case UInt8(ascii: "["), UInt8(ascii: "{"):
            depth += 1
            deepest = max(deepest, depth)
        case UInt8(ascii: "]"), UInt8(ascii: "}"): depth -= 1
        default: break
        }
    }
    return deepest
}

/// Nesting of a parsed tree; at most the text's, since a repeated key keeps only its last value.
func treeNesting(_ value: JSONValue) -> Int {
    switch value {
    case .array(let elements): 1 + (elements.map(treeNesting).max() ?? 0)
    case .object(let object): 1 + (object.members.map { treeNesting($0.value) }.max() ?? 0)
    default: 0
    }
}
