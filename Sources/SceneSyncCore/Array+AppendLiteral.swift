extension Array<UInt8> {
    /// Appends a literal's UTF-8 bytes with one copy.
    ///
    /// For the fixed parts of every line the daemon writes: `append(contentsOf: "…".utf8)` walks a `String.UTF8View`
    /// through its iterator, several times per change and per answer.
    @inlinable
    public mutating func append(literal text: StaticString) {
        text.withUTF8Buffer { append(contentsOf: $0) }
    }
}
