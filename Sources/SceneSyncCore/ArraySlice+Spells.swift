extension ArraySlice<UInt8> {
    /// Whether these bytes are exactly `text`'s UTF-8: the count first, then the bytes of two buffers.
    ///
    /// For the keys and literals of every `set`: `elementsEqual` with a `String.UTF8View` walks the string through
    /// its generic iterator, which cost more than the rest of reading the key.
    @inlinable
    public func spells(_ text: StaticString) -> Bool {
        count == text.utf8CodeUnitCount && text.withUTF8Buffer { expected in self.elementsEqual(expected) }
    }
}
