/// A subscription's scene pattern: a shell glob over scene IDs (`*`, `?`, `[abc]`, `[a-z]`, `[!x]`).
///
/// Scene IDs have no `/`, so `*` matches any run of characters. A malformed bracket (`[` without `]`) matches a
/// literal `[`, as `fnmatch` does.
public struct ScenePattern: Sendable, Equatable, Hashable, CustomStringConvertible {
    public let text: String
    private let bytes: [UInt8]
    /// A pattern without metacharacters names one scene: it is compared directly, and the daemon indexes its
    /// subscriptions by that scene instead of testing the pattern against every change.
    public let isLiteral: Bool

    public init(_ text: String) {
        self.text = text
        self.bytes = Array(text.utf8)
        self.isLiteral = !bytes.contains {
            $0 == UInt8(ascii: "*") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "[")
        }
    }

    public static let all = ScenePattern("*")

    public var description: String { text }

    public func matches(_ scene: SceneID) -> Bool {
        matches(scene.rawValue)
    }

    public func matches(_ name: String) -> Bool {
        if isLiteral { return name == text }
        if text == "*" { return true }
        // Runs per change and subscription: match the string's own UTF-8 storage instead of copying it.
        if let matched = name.utf8.withContiguousStorageIfAvailable({ ScenePattern.match(bytes[...], $0) }) {
            return matched
        }
        return Array(name.utf8).withUnsafeBufferPointer { ScenePattern.match(bytes[...], $0) }
    }

    /// Iterative glob matching with single-star backtracking: linear in practice, never exponential.
    private static func match(_ pattern: ArraySlice<UInt8>, _ name: UnsafeBufferPointer<UInt8>) -> Bool {
        var p = pattern.startIndex
        var n = name.startIndex
        var starP: Int? = nil
        var starN = n
        while n < name.endIndex {
            if p < pattern.endIndex {
                let token = pattern[p]
                if token == UInt8(ascii: "*") {
                    starP = p
                    starN = n
                    p += 1
                    continue
                }
                if token == UInt8(ascii: "?") {
                    p += 1
                    n += 1
                    continue
                }
                if token == UInt8(ascii: "["), let (matched, next) = matchBracket(pattern, at: p, name[n]) {
                    if matched {
                        p = next
                        n += 1
                        continue
                    }
                } else if token == name[n] {
                    p += 1
                    n += 1
                    continue
                }
            }
            guard let star = starP else { return false }
            p = star + 1
            starN += 1
            n = starN
        }
        while p < pattern.endIndex, pattern[p] == UInt8(ascii: "*") { p += 1 }
        return p == pattern.endIndex
    }

    /// Matches `byte` against the bracket expression at `start`. Returns `nil` when the bracket is not closed.
    private static func matchBracket(_ pattern: ArraySlice<UInt8>, at start: Int, _ byte: UInt8) -> (Bool, Int)? {
        var i = start + 1
        var negated = false
        if i < pattern.endIndex, pattern[i] == UInt8(ascii: "!") || pattern[i] == UInt8(ascii: "^") {
            negated = true
            i += 1
        }
        var matched = false
        var first = true
        while i < pattern.endIndex {
            let c = pattern[i]
            if c == UInt8(ascii: "]"), !first { return (matched != negated, i + 1) }
            first = false
            if i + 2 < pattern.endIndex, pattern[i + 1] == UInt8(ascii: "-"), pattern[i + 2] != UInt8(ascii: "]") {
                if c <= byte, byte <= pattern[i + 2] { matched = true }
                i += 3
            } else {
                if c == byte { matched = true }
                i += 1
            }
        }
        return nil
    }
}
