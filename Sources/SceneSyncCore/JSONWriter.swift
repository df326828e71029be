/// Byte-level JSON output helpers shared by the file formats, the wire protocol and snapshots.
///
/// Everything the daemon sends is assembled from bytes rather than through `JSONEncoder`: element values must be
/// embedded exactly as they were received, and the fan-out path encodes each change once for all subscribers.
public enum JSONWriter {
    /// Appends `string` as a JSON string literal, escaping only what JSON requires (plus `/`-free, like
    /// `JSONEncoder` with `.withoutEscapingSlashes`).
    public static func appendString(_ string: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        appendEscaped(string.utf8, to: &out)
        out.append(UInt8(ascii: "\""))
    }

    /// Appends the escaped body of a string literal (without the quotes).
    public static func appendEscaped(_ bytes: some Sequence<UInt8>, to out: inout [UInt8]) {
        let done: Void? = bytes.withContiguousStorageIfAvailable { appendEscaped(buffer: $0, to: &out) }
        if done == nil {
            Array(bytes).withUnsafeBufferPointer { appendEscaped(buffer: $0, to: &out) }
        }
    }

    /// Writes a slice at a time into room made for its worst case (six bytes per byte): this sits under every scene
    /// file, wire line and snapshot written, and a codable item takes an escape every few bytes, so room is checked
    /// once per slice rather than once per run and escape. The slices keep the room beyond what is written small.
    static func appendEscaped(buffer: UnsafeBufferPointer<UInt8>, to out: inout [UInt8]) {
        var start = 0
        while start < buffer.count {
            let end = min(buffer.count, start + 1024)
            out.append(addingCapacity: (end - start) * 6) { span in
                for index in start..<end {
                    let byte = buffer[index]
                    guard needsEscape(byte) else {
                        span.append(byte)
                        continue
                    }
                    span.append(UInt8(ascii: "\\"))
                    if let letter = shortEscape(byte) {
                        span.append(letter)
                    } else {
                        span.append(UInt8(ascii: "u"))
                        span.append(UInt8(ascii: "0"))
                        span.append(UInt8(ascii: "0"))
                        span.append(hexDigit(byte >> 4))
                        span.append(hexDigit(byte & 0xF))
                    }
                }
            }
            start = end
        }
    }

    /// How many bytes ``appendEscaped(buffer:to:)`` appends for `buffer`, counted without writing them.
    static func escapedCount(_ buffer: UnsafeBufferPointer<UInt8>) -> Int {
        var count = buffer.count
        for byte in buffer where needsEscape(byte) { count += shortEscape(byte) == nil ? 5 : 1 }
        return count
    }

    /// Whether escaping writes `byte` as an escape. With ``shortEscape(_:)``, the one table of how the daemon
    /// escapes: writing, counting, and the reader that tells whether a literal is spelled as it would write it.
    @inline(__always)
    static func needsEscape(_ byte: UInt8) -> Bool {
        byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\")
    }

    /// The character after the backslash of `byte`'s two-byte escape; `nil` for one written as `\u00XX`.
    @inline(__always)
    static func shortEscape(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"): byte
        case 0x0A: UInt8(ascii: "n")
        case 0x0D: UInt8(ascii: "r")
        case 0x09: UInt8(ascii: "t")
        case 0x08: UInt8(ascii: "b")
        case 0x0C: UInt8(ascii: "f")
        default: nil
        }
    }

    static func hexDigit(_ value: UInt8) -> UInt8 {
        value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "a") + value - 10
    }

    /// Appends a valid JSON text with all insignificant whitespace removed. Pretty-printed items from scene files
    /// must fit on one protocol line; everything else about their bytes is kept.
    public static func appendCompact(_ json: some Collection<UInt8>, to out: inout [UInt8]) {
        var scanner = StringAwareScanner()
        for byte in json where !scanner.isInsignificantWhitespace(byte) { out.append(byte) }
    }

    /// Whether `json` (a valid JSON text) contains whitespace outside strings, i.e. whether compacting changes it.
    public static func hasInsignificantWhitespace(_ json: some Collection<UInt8>) -> Bool {
        var scanner = StringAwareScanner()
        return json.contains { scanner.isInsignificantWhitespace($0) }
    }

    /// Follows a valid JSON text byte by byte, knowing whether each byte is inside a string literal.
    private struct StringAwareScanner {
        var inString = false
        var escaped = false

        /// Whether `byte`, the next byte of the text, is whitespace outside any string.
        mutating func isInsignificantWhitespace(_ byte: UInt8) -> Bool {
            if inString {
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                }
                return false
            }
            switch byte {
            case 0x20, 0x09, 0x0A, 0x0D: return true
            case UInt8(ascii: "\""): inString = true
            default: break
            }
            return false
        }
    }

    /// Its decimal digits, made on the stack and appended in one go: a snapshot writes three numbers per scene, and
    /// making a `String` of each first cost as much as writing the rest of its header.
    public static func appendUInt(_ value: UInt64, to out: inout [UInt8]) {
        guard value >= 10 else { return out.append(UInt8(ascii: "0") + UInt8(truncatingIfNeeded: value)) }
        // 20 digits hold any UInt64.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var start = digits.count
            var rest = value
            while rest > 0 {
                start -= 1
                digits.initializeElement(at: start, to: UInt8(ascii: "0") + UInt8(truncatingIfNeeded: rest % 10))
                rest /= 10
            }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: digits[start...]))
        }
    }

    /// Its sign, then its magnitude's digits (`Int64.min`'s magnitude is a `UInt64` too): no `String` in between.
    public static func appendInt(_ value: Int64, to out: inout [UInt8]) {
        if value < 0 { out.append(UInt8(ascii: "-")) }
        appendUInt(value.magnitude, to: &out)
    }
}
