extension JSONParser {
    /// The text of the string at `span` of a checked JSON text when it holds no escape: its bytes in place, which
    /// are then its UTF-8. `nil` for a string with an escape, and for any other value.
    ///
    /// What a request, a snapshot or a path element reads of its small members, without a `String` or a tree
    /// first; the caller reads the rest (an escape, another kind of value) the general way.
    public static func unescapedText(_ bytes: [UInt8], _ span: Range<Int>) -> ArraySlice<UInt8>? {
        guard span.count >= 2, bytes[span.lowerBound] == UInt8(ascii: "\"") else { return nil }
        let text = bytes[(span.lowerBound + 1)..<(span.upperBound - 1)]
        return text.contains(UInt8(ascii: "\\")) ? nil : text
    }

    /// The value of the number at `span` when it is written as plain digits (no sign, fraction or exponent) and
    /// fits a `UInt64`; `nil` otherwise, for the caller to read it the general way.
    public static func digitsValue(_ bytes: [UInt8], _ span: Range<Int>) -> UInt64? {
        guard !span.isEmpty else { return nil }
        var value: UInt64 = 0
        for byte in bytes[span] {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            let (times, overflowA) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflowB) = times.addingReportingOverflow(UInt64(byte - UInt8(ascii: "0")))
            guard !overflowA, !overflowB else { return nil }
            value = sum
        }
        return value
    }
}
