extension JSONParser {
    /// Skips one value of a text that was validated already, looking only at strings and brackets: a request line
    /// or a snapshot is validated once as a whole, and then walked again to find its members and elements, which
    /// need not check every number and escape a second time.
    mutating func skipValidatedValue() {
        var depth = 0
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "\""):
                index += 1
                while index < bytes.count, bytes[index] != UInt8(ascii: "\"") {
                    // An escape's second byte may be a quote: it does not end the string.
                    index += bytes[index] == UInt8(ascii: "\\") ? 2 : 1
                }
                index += 1
                if depth == 0 { return }
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                depth += 1
                index += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                // At depth 0 this closes the container around the value: the value ended before it.
                if depth == 0 { return }
                depth -= 1
                index += 1
                if depth == 0 { return }
            case UInt8(ascii: ","), UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"):
                // Between tokens: inside a container they are part of the value; at its top they end a scalar.
                if depth == 0 { return }
                index += 1
            default:
                // A number, a literal, or `:` inside a container.
                index += 1
            }
        }
    }

    /// Skips one value: checking it, or, when the text was validated already, only finding its end.
    mutating func skipValue(depth: Int, validated: Bool) throws(JSONError) {
        if validated {
            skipValidatedValue()
        } else {
            try skipValue(depth: depth)
        }
    }
}
