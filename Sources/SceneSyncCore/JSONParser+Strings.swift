/// String literals: validation (including UTF-8), decoding and unescaping.
extension JSONParser {
    mutating func skipString() throws(JSONError) {
        try expect(UInt8(ascii: "\""), "'\"'")
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                index += 1
                return
            }
            if byte < 0x20 { throw unexpected("control character in string") }
            if byte == UInt8(ascii: "\\") {
                index += 1
                guard let escaped = peek() else { throw .truncated }
                switch escaped {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"),
                    UInt8(ascii: "f"), UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                    index += 1
                case UInt8(ascii: "u"):
                    index += 1
                    _ = try readHex4()
                default:
                    throw unexpected("invalid escape")
                }
                continue
            }
            if byte >= 0x80 {
                try skipUTF8Sequence()
                continue
            }
            index += 1
        }
        throw .truncated
    }

    /// Validates one multi-byte UTF-8 sequence, so invalid encodings are rejected rather than passed through.
    mutating func skipUTF8Sequence() throws(JSONError) {
        let lead = bytes[index]
        let length: Int
        let minimum: UInt32
        var scalar: UInt32
        switch lead {
        case 0xC2...0xDF:
            length = 2
            minimum = 0x80
            scalar = UInt32(lead & 0x1F)
        case 0xE0...0xEF:
            length = 3
            minimum = 0x800
            scalar = UInt32(lead & 0x0F)
        case 0xF0...0xF4:
            length = 4
            minimum = 0x10000
            scalar = UInt32(lead & 0x07)
        default: throw unexpected("invalid UTF-8")
        }
        guard index + length <= bytes.count else { throw .truncated }
        for offset in 1..<length {
            let continuation = bytes[index + offset]
            guard continuation & 0xC0 == 0x80 else { throw unexpected("invalid UTF-8") }
            scalar = scalar << 6 | UInt32(continuation & 0x3F)
        }
        guard scalar >= minimum, scalar <= 0x10FFFF, !(0xD800...0xDFFF).contains(scalar) else {
            throw unexpected("invalid UTF-8")
        }
        index += length
    }

    mutating func readHex4() throws(JSONError) -> UInt32 {
        guard index + 4 <= bytes.count else { throw .truncated }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
            default: throw unexpected("invalid \\u escape")
            }
            value = value << 4 | digit
            index += 1
        }
        return value
    }

    /// Decodes a string literal. Lone surrogates in escapes become U+FFFD rather than failing, as most JSON
    /// decoders do, so an item that other tools accept is not rejected here.
    mutating func parseString() throws(JSONError) -> String {
        let start = index
        try skipString()
        let literal = bytes[(start + 1)..<(index - 1)]
        if !literal.contains(UInt8(ascii: "\\")) {
            return String(decoding: literal, as: UTF8.self)
        }
        return JSONParser.unescape(literal)
    }

    /// Unescapes the inside of a string literal that has already been validated.
    static func unescape(_ literal: ArraySlice<UInt8>) -> String {
        String(decoding: unescapeBytes(literal), as: UTF8.self)
    }

    /// Unescapes the inside of a string literal that has already been validated, to UTF-8 bytes.
    static func unescapeBytes(_ literal: ArraySlice<UInt8>) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(literal.count)
        _ = unescape(literal, appendingTo: &out)
        return out
    }

    /// ``unescapeBytes(_:)`` appended to `out`, telling whether ``JSONWriter/appendEscaped(_:to:)`` of what it
    /// appended gives `literal` back: a codable scene file keeps an item's literal only when it does not, and
    /// learning that in the same pass spares escaping every item again, and two buffers, on each file read.
    static func unescape(_ literal: ArraySlice<UInt8>, appendingTo out: inout [UInt8]) -> Bool {
        var canonical = true
        var i = literal.startIndex
        func hex(_ at: Int) -> UInt32 {
            var value: UInt32 = 0
            for byte in literal[at..<(at + 4)] {
                let digit: UInt32
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
                default: digit = UInt32(byte &- UInt8(ascii: "A") &+ 10)
                }
                value = value << 4 | digit
            }
            return value
        }
        while i < literal.endIndex {
            let byte = literal[i]
            guard byte == UInt8(ascii: "\\") else {
                // Escaping writes these as escapes, so a literal holding them raw is not what it writes.
                if JSONWriter.needsEscape(byte) { canonical = false }
                out.append(byte)
                i += 1
                continue
            }
            let escaped = literal[i + 1]
            i += 2
            switch escaped {
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                // Escaping spells only the control characters without a short escape this way, in lower case.
                let spelling = literal[i..<(i + 4)]
                var scalar = hex(i)
                i += 4
                if (0xD800...0xDBFF).contains(scalar), i + 6 <= literal.endIndex, literal[i] == UInt8(ascii: "\\"),
                    literal[i + 1] == UInt8(ascii: "u")
                {
                    let low = hex(i + 2)
                    if (0xDC00...0xDFFF).contains(low) {
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                        i += 6
                    }
                }
                if scalar >= 0x20 || JSONWriter.shortEscape(UInt8(truncatingIfNeeded: scalar)) != nil
                    || spelling.contains(where: { (UInt8(ascii: "A")...UInt8(ascii: "F")).contains($0) })
                {
                    canonical = false
                }
                let decoded = Unicode.Scalar(scalar) ?? "\u{FFFD}"
                UTF8.encode(decoded) { out.append($0) }
            case UInt8(ascii: "\""), UInt8(ascii: "\\"): out.append(escaped)
            default:
                // `\/`: escaping leaves the slash as it is.
                canonical = false
                out.append(escaped)
            }
        }
        return canonical
    }
}
