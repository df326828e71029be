extension JSONParser {
    /// The kinds of the open containers while a value is skipped: true for an object, false for an array. The first
    /// 64 levels live in one word; deeper ones (rare, up to the parser's nesting limit) in an array.
    struct ContainerStack {
        private var bits: UInt64 = 0
        private var deeper: [Bool] = []
        private(set) var count = 0

        var isEmpty: Bool { count == 0 }

        var last: Bool? {
            guard count > 0 else { return nil }
            if count > 64 { return deeper.last }
            return (bits >> UInt64(count - 1)) & 1 == 1
        }

        mutating func append(_ isObject: Bool) {
            if count >= 64 {
                deeper.append(isObject)
            } else if isObject {
                bits |= 1 << UInt64(count)
            } else {
                bits &= ~(1 << UInt64(count))
            }
            count += 1
        }

        mutating func removeLast() {
            precondition(count > 0, "a container closed that was never opened")
            count -= 1
            if count >= 64 { deeper.removeLast() }
        }
    }
}
