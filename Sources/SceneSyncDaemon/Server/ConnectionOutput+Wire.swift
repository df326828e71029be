import NIOCore

extension ConnectionOutput.Item {
    /// Appends the item's bytes as one protocol line. The markers write nothing: the writer acts on them instead.
    func write(to buffer: inout ByteBuffer) {
        switch self {
        case .line(let bytes):
            buffer.writeBytes(bytes)
        case .event(let subscription, let name, let body):
            // Runs once per event and subscriber: constants as static strings, the id's digits written in place.
            buffer.reserveCapacity(minimumWritableBytes: 48 + name.utf8.count + body.count)
            buffer.writeStaticString(#"{"event":""#)
            buffer.writeString(name)
            buffer.writeStaticString(#"","subscription":"#)
            Self.writeDecimal(subscription, to: &buffer)
            if !body.isEmpty {
                buffer.writeInteger(UInt8(ascii: ","))
                buffer.writeBytes(body)
            }
            buffer.writeStaticString("}\n")
        case .lagged, .catchUp:
            break
        }
    }

    static func writeDecimal(_ value: UInt64, to buffer: inout ByteBuffer) {
        var digits = 1
        var rest = value
        while rest >= 10 {
            rest /= 10
            digits += 1
        }
        buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: digits) { raw in
            var remaining = value
            for index in stride(from: digits - 1, through: 0, by: -1) {
                raw[index] = UInt8(truncatingIfNeeded: 48 + remaining % 10)
                remaining /= 10
            }
            return digits
        }
    }
}
