/// JSON text in a form where equal values are spelled with equal bytes, so that two such texts whose bytes differ
/// are different values without parsing either.
///
/// SPEC §3 compares elements as JSON values: `1` equals `1.0`, `"\u0041"` equals `"A"`, members may come in any order,
/// and whitespace does not count. A text avoids every one of those freedoms when it has no whitespace outside
/// strings, no escapes and only ASCII inside them, only integers (no fraction, exponent or `-0`), and no object with
/// more than one member. Most navigation items are such a text (an enum case's `{"detail":{"_0":42}}`, an ID), and a
/// client's `set` compares each of its elements with the current one: the bytes then decide.
enum JSONPlainText {
    /// Deeper texts are not looked at: they are rare in a path, and the bit stack below holds 64 levels.
    static let maxDepth = 64

    /// Whether `bytes`, a valid JSON text, has the plain form described above.
    static func isPlain(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        // One bit per open container, set for an object, whose second member makes the text not plain.
        var objects: UInt64 = 0
        var depth = 0
        var index = 0
        let count = bytes.count
        while index < count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                while index < count, bytes[index] != UInt8(ascii: "\"") {
                    let inner = bytes[index]
                    if inner == UInt8(ascii: "\\") || inner >= 0x80 { return false }
                    index += 1
                }
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                guard depth < maxDepth else { return false }
                objects = (objects << 1) | (byte == UInt8(ascii: "{") ? 1 : 0)
                depth += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                objects >>= 1
                depth -= 1
            case UInt8(ascii: ","):
                if objects & 1 == 1 { return false }
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
