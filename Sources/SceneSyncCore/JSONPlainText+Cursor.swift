extension JSONPlainText {
    /// The tokens of a text in the plain form of ``isPlain(_:)`` (but for the order of keys); `nil` at anything
    /// else.
    struct Cursor {
        enum Kind: Equatable {
            case open(isObject: Bool)
            case close(isObject: Bool)
            case comma
            case colon
            case scalar
            case end
        }

        let bytes: UnsafeBufferPointer<UInt8>
        var index = 0

        mutating func next() -> (kind: Kind, range: Range<Int>)? {
            guard index < bytes.count else { return (.end, index..<index) }
            let start = index
            let byte = bytes[index]
            index += 1
            switch byte {
            case UInt8(ascii: "{"): return (.open(isObject: true), start..<index)
            case UInt8(ascii: "["): return (.open(isObject: false), start..<index)
            case UInt8(ascii: "}"): return (.close(isObject: true), start..<index)
            case UInt8(ascii: "]"): return (.close(isObject: false), start..<index)
            case UInt8(ascii: ","): return (.comma, start..<index)
            case UInt8(ascii: ":"): return (.colon, start..<index)
            case UInt8(ascii: "\""):
                while index < bytes.count, bytes[index] != UInt8(ascii: "\"") {
                    if bytes[index] == UInt8(ascii: "\\") || bytes[index] >= 0x80 { return nil }
                    index += 1
                }
                index += 1
                return (.scalar, start..<index)
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                // `-0` equals `0`, and is the one integer with two spellings.
                if byte == UInt8(ascii: "-"), index < bytes.count, bytes[index] == UInt8(ascii: "0") { return nil }
                while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) {
                    index += 1
                }
                if index < bytes.count,
                    bytes[index] == UInt8(ascii: ".") || bytes[index] == UInt8(ascii: "e")
                        || bytes[index] == UInt8(ascii: "E")
                {
                    return nil
                }
                return (.scalar, start..<index)
            case UInt8(ascii: "t"), UInt8(ascii: "f"), UInt8(ascii: "n"):
                while index < bytes.count, bytes[index] >= UInt8(ascii: "a"), bytes[index] <= UInt8(ascii: "z") {
                    index += 1
                }
                return (.scalar, start..<index)
            default:
                // Whitespace outside strings.
                return nil
            }
        }
    }
}
