/// JSON text in a form where equal values are spelled with equal bytes, so that two such texts whose bytes differ
/// are different values without parsing either.
///
/// SPEC §3 compares elements as JSON values: `1` equals `1.0`, `"\u0041"` equals `"A"`, members may come in any order,
/// and whitespace does not count. A text avoids every one of those freedoms when it has no whitespace outside
/// strings, no escapes and only ASCII inside them, only integers (no fraction, exponent or `-0`), and the members of
/// each object in strictly ascending order of their keys' bytes (one order for every spelling, and no key twice).
/// Most navigation items are such a text (an enum case's `{"detail":{"_0":42}}`, a struct's `{"id":7,"title":"…"}`,
/// an ID), and a client's `set` compares each of its elements with the current one: the bytes then decide.
enum JSONPlainText {
    /// Deeper texts are not looked at: they are rare in a path.
    static let maxDepth = 32

    /// Whether `bytes`, a valid JSON text, has the plain form described above.
    static func isPlain(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        withUnsafeTemporaryAllocation(of: Range<Int>.self, capacity: maxDepth) { lastKeys in
            isPlain(bytes, lastKeys: lastKeys)
        }
    }

    /// `lastKeys[d]` is the last key of the object open at depth `d` (`-1..<-1` before its first member).
    private static func isPlain(
        _ bytes: UnsafeBufferPointer<UInt8>, lastKeys: UnsafeMutableBufferPointer<Range<Int>>
    ) -> Bool {
        // One bit per open container, set for an object.
        var objects: UInt64 = 0
        var depth = 0
        var expectKey = false
        var index = 0
        let count = bytes.count
        while index < count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                let start = index + 1
                index += 1
                while index < count, bytes[index] != UInt8(ascii: "\"") {
                    let inner = bytes[index]
                    if inner == UInt8(ascii: "\\") || inner >= 0x80 { return false }
                    index += 1
                }
                if expectKey {
                    let key = start..<index
                    let last = lastKeys[depth - 1]
                    // After the object's first key, each must sort strictly after the one before it.
                    if last.lowerBound >= 0, !bytes[last].lexicographicallyPrecedes(bytes[key]) { return false }
                    lastKeys[depth - 1] = key
                    expectKey = false
                }
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                guard depth < maxDepth else { return false }
                objects = (objects << 1) | (byte == UInt8(ascii: "{") ? 1 : 0)
                lastKeys[depth] = -1..<(-1)
                depth += 1
                expectKey = byte == UInt8(ascii: "{")
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                objects >>= 1
                depth -= 1
                expectKey = false
            case UInt8(ascii: ","):
                expectKey = objects & 1 == 1
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                var digit = byte == UInt8(ascii: "-") ? index + 1 : index
                // `-0` equals `0`, and is the one integer with two spellings.
                if byte == UInt8(ascii: "-"), digit < count, bytes[digit] == UInt8(ascii: "0") { return false }
                while digit < count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[digit]) { digit += 1 }
                if digit < count, [UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E")].contains(bytes[digit]) {
                    return false
                }
                index = digit - 1
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"):
                return false
            default:
                // `:`, and the letters of `true`, `false` and `null`.
                break
            }
            index += 1
        }
        return true
    }
}
