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
        var cursor = Cursor(bytes: bytes)
        // One bit per open container, set for an object.
        var objects: UInt64 = 0
        var depth = 0
        var expectKey = false
        while let token = cursor.next() {
            switch token.kind {
            case .end:
                return true
            case .scalar where expectKey:
                let key = (token.range.lowerBound + 1)..<(token.range.upperBound - 1)
                let last = lastKeys[depth - 1]
                // After the object's first key, each must sort strictly after the one before it.
                if last.lowerBound >= 0, !bytes[last].lexicographicallyPrecedes(bytes[key]) { return false }
                lastKeys[depth - 1] = key
                expectKey = false
            case .scalar, .colon:
                break
            case .open(let isObject):
                guard depth < maxDepth else { return false }
                objects = (objects << 1) | (isObject ? 1 : 0)
                lastKeys[depth] = -1..<(-1)
                depth += 1
                expectKey = isObject
            case .close:
                objects >>= 1
                depth -= 1
                expectKey = false
            case .comma:
                expectKey = objects & 1 == 1
            }
        }
        // A token of another spelling (whitespace, an escape, a fraction…).
        return false
    }
}
