extension JSONPlainText {
    /// Whether `left` and `right`, two valid JSON texts, are proven to be different values without parsing them:
    /// both are written with the same members in the same order (the same keys at every step, any order, no key
    /// twice in an object), every scalar is spelled the one way ``isPlain(_:)`` allows, and some scalar differs.
    /// `false` means "not proven", and the caller parses.
    ///
    /// ``isPlain(_:)`` needs members in ascending order of their keys, and so misses what Swift's encoder writes
    /// for a struct, whose members come in their declaration order (`{"s":1,"f":0}`): two versions of such an item
    /// were parsed into trees to be told apart. Two texts with the same members in the same order differ as values
    /// exactly where a scalar at the same place differs, as long as no key repeats (the last of a repeated key is
    /// its value, so an earlier one may differ and count for nothing).
    static func differInAValue(_ left: UnsafeBufferPointer<UInt8>, _ right: UnsafeBufferPointer<UInt8>) -> Bool {
        withUnsafeTemporaryAllocation(of: Range<Int>.self, capacity: maxKeys) { keys in
            withUnsafeTemporaryAllocation(of: Int.self, capacity: maxDepth) { keyStarts in
                differInAValue(left, right, keys: keys, keyStarts: keyStarts)
            }
        }
    }

    /// Keys of the open objects of `left` held at once for the check that none repeats; a text with more is not
    /// looked at.
    static let maxKeys = 64

    private static func differInAValue(
        _ left: UnsafeBufferPointer<UInt8>, _ right: UnsafeBufferPointer<UInt8>,
        keys: UnsafeMutableBufferPointer<Range<Int>>, keyStarts: UnsafeMutableBufferPointer<Int>
    ) -> Bool {
        var leftCursor = Cursor(bytes: left)
        var rightCursor = Cursor(bytes: right)
        // One bit per open container, set for an object; `keyStarts[d]`: where the keys of the object open at
        // depth `d` start in `keys`.
        var objects: UInt64 = 0
        var depth = 0
        var expectKey = false
        var keyCount = 0
        var differs = false
        while true {
            guard let leftToken = leftCursor.next(), let rightToken = rightCursor.next() else { return false }
            switch (leftToken.kind, rightToken.kind) {
            case (.end, .end):
                return differs
            case (.scalar, .scalar) where !expectKey:
                if !differs, !left[leftToken.range].elementsEqual(right[rightToken.range]) { differs = true }
            case (.scalar, .scalar):
                // A key: the same in both, and not one the object had already.
                let key = leftToken.range
                guard left[key].elementsEqual(right[rightToken.range]), left[key].first == UInt8(ascii: "\""),
                    keyCount < keys.count, depth > 0
                else { return false }
                let start = keyStarts[depth - 1]
                for earlier in keys[start..<keyCount] where left[earlier].elementsEqual(left[key]) { return false }
                keys[keyCount] = key
                keyCount += 1
                expectKey = false
            case (.open(let leftIsObject), .open(let rightIsObject)) where leftIsObject == rightIsObject && !expectKey:
                guard depth < maxDepth else { return false }
                objects = (objects << 1) | (leftIsObject ? 1 : 0)
                keyStarts[depth] = keyCount
                depth += 1
                expectKey = leftIsObject
            case (.close(let leftIsObject), .close(let rightIsObject)) where leftIsObject == rightIsObject:
                guard depth > 0 else { return false }
                objects >>= 1
                depth -= 1
                keyCount = keyStarts[depth]
                expectKey = false
            case (.comma, .comma):
                expectKey = objects & 1 == 1
            case (.colon, .colon):
                break
            default:
                // Different shapes, or a scalar where the other has a container: only a parse can tell.
                return false
            }
        }
    }
}
