import NIOCore

extension ConnectionOutput.Item {
    /// Appends the item's bytes as one protocol line. The markers write nothing: the writer acts on them instead.
    func write(to buffer: inout ByteBuffer) {
        switch self {
        case .line(let bytes):
            buffer.writeBytes(bytes)
        case .event(let subscription, let name, let body):
            Self.writeEvent(subscription: subscription, prefix: name.linePrefix, body: body, to: &buffer)
        case .lagged, .catchUp:
            break
        }
    }

    /// `prefix`, the subscription's digits, `,` and `body` (when there is one), `}` and the newline, in one reserved
    /// write: this runs once per event and subscriber, where one call of the buffer's API per piece cost more than
    /// copying the bytes.
    static func writeEvent(subscription: UInt64, prefix: StaticString, body: [UInt8], to buffer: inout ByteBuffer) {
        let digits = decimalDigits(subscription)
        let prefixCount = prefix.utf8CodeUnitCount
        let total = prefixCount + digits + (body.isEmpty ? 0 : 1 + body.count) + 2
        buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: total) { raw in
            guard let base = raw.baseAddress else { return 0 }
            base.copyMemory(from: prefix.utf8Start, byteCount: prefixCount)
            var index = prefixCount + digits
            var remaining = subscription
            for digit in stride(from: index - 1, through: prefixCount, by: -1) {
                raw[digit] = UInt8(truncatingIfNeeded: 48 + remaining % 10)
                remaining /= 10
            }
            if !body.isEmpty {
                raw[index] = UInt8(ascii: ",")
                index += 1
                body.withUnsafeBytes { bytes in
                    if let source = bytes.baseAddress {
                        (base + index).copyMemory(from: source, byteCount: bytes.count)
                    }
                }
                index += body.count
            }
            raw[index] = UInt8(ascii: "}")
            raw[index + 1] = UInt8(ascii: "\n")
            return total
        }
    }

    private static func decimalDigits(_ value: UInt64) -> Int {
        var digits = 1
        var rest = value
        while rest >= 10 {
            rest /= 10
            digits += 1
        }
        return digits
    }
}
