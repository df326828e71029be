/// Finds the protocol's lines in a byte stream (§6), for the daemon's and the client's decoders alike: one JSON object
/// per `\n`-terminated line, a trailing `\r` ignored, an unterminated last line at EOF still a line.
///
/// It only scans; the caller owns the buffer and takes the bytes. Bytes already searched are remembered, so a long
/// line that arrives in many reads is scanned once.
public struct LineFramer: Sendable {
    /// What the buffer holds next.
    public enum Next: Sendable, Equatable {
        /// A complete line of `length` bytes (without its `\n`, which follows it and must be consumed too).
        case line(length: Int)
        /// No complete line yet, and nothing over the limit.
        case needMoreData
        /// The next line is longer than the limit (complete or not).
        case tooLong
    }

    /// How far the buffer has already been searched for a newline.
    private var scanned = 0

    public init() {}

    /// Looks for the next line in `bytes`, the unread part of the buffer; `maxLength` is read per call, so a
    /// reloaded limit applies to the next line.
    public mutating func next<Bytes: RandomAccessCollection<UInt8>>(in bytes: Bytes, maxLength: Int) -> Next {
        if let found = bytes.withContiguousStorageIfAvailable({
            next(in: UnsafeRawBufferPointer($0), maxLength: maxLength)
        }) {
            return found
        }
        return Array(bytes).withUnsafeBytes { next(in: $0, maxLength: maxLength) }
    }

    /// ``next(in:maxLength:)`` on contiguous bytes, such as a socket buffer's: not generic, so that a caller in
    /// another module (the daemon's decoder, for every request) runs compiled code instead of the runtime's generic
    /// dispatch, which cost more than the search itself.
    public mutating func next(in bytes: UnsafeRawBufferPointer, maxLength: Int) -> Next {
        let searchStart = min(scanned, bytes.count)
        guard let newline = bytes[searchStart...].firstIndex(of: UInt8(ascii: "\n")) else {
            scanned = bytes.count
            return bytes.count > maxLength ? .tooLong : .needMoreData
        }
        scanned = 0
        return newline > maxLength ? .tooLong : .line(length: newline)
    }

    /// Forgets what was searched: the caller dropped the buffer's content.
    public mutating func reset() {
        scanned = 0
    }

    /// A line as the protocol reads it: without a trailing `\r`.
    public static func dropCarriageReturn(_ line: inout [UInt8]) {
        if line.last == UInt8(ascii: "\r") { line.removeLast() }
    }
}
