/// One entry of a navigation path.
///
/// An element keeps the exact bytes it arrived with so that the daemon can write a scene file back byte for byte:
/// apps compare files, and SwiftUI decodes items with their own decoders, so re-encoding an unchanged element would
/// be a visible change. Equality is the contract's: equal tags and JSON-equal values.
///
/// The bytes live in an ``ElementStorage`` shared by all the elements of a path read from one file.
public struct Element: Sendable, Equatable, CustomStringConvertible {
    let storage: ElementStorage
    /// Where the element's parts lie in `storage`.
    let record: ElementStorage.Record

    static let none = ElementStorage.Record.none

    /// Reads the record at `recordStart` of `storage`, whose bytes start at `bytes`.
    init(storage: ElementStorage, recordStart: Int, bytes: UnsafeMutablePointer<UInt8>) {
        self.storage = storage
        self.record = ElementStorage.Record(at: recordStart, in: bytes)
    }

    var recordStart: UInt32 { record.start }
    var dataStart: UInt32 { record.dataStart }
    var tagCount: UInt32 { record.tagCount }
    var itemCount: UInt32 { record.itemCount }
    var literalCount: UInt32 { record.literalCount }
    var tagLiteralCount: UInt32 { record.tagLiteralCount }

    /// An element from bytes already validated as one JSON text.
    init(tag: String?, item: [UInt8], itemLiteral: [UInt8]? = nil, tagLiteral: [UInt8]? = nil) {
        var builder = ElementStorage.Builder()
        builder.append(
            tag: tag.map { Array($0.utf8)[...] }, item: item[...], literal: itemLiteral?[...],
            tagLiteral: tagLiteral?[...])
        let storage = ElementStorage.make(builder)
        self = storage.buffer.withUnsafeMutablePointerToElements {
            Element(storage: storage, recordStart: 0, bytes: $0)
        }
    }

    /// An element built from a parsed value, as clients send them.
    public init(tag: String?, value: JSONValue) {
        self.init(tag: tag, item: value.serialized())
    }

    /// Validates `json` as one JSON text.
    public init(tag: String?, json: [UInt8]) throws(JSONError) {
        try JSONParser.validate(json)
        self.init(tag: tag, item: json)
    }

    /// The module-qualified type name of a codable element (`MyApp.Recipe`); `nil` in array paths. Opaque.
    public var tag: String? {
        hasTag ? withTagBytes { String(decoding: $0, as: UTF8.self) } : nil
    }

    /// The item's JSON text, as received: an array file's value bytes, or a codable item's decoded string.
    public var item: [UInt8] { withItemBytes { Array($0) } }

    /// A codable item's string literal body exactly as the file had it, kept only when escaping `item` again would
    /// not reproduce it (for example `\/` or `\u00e9` escapes).
    var itemLiteral: [UInt8]? { literalCount == Element.none ? nil : withLiteralBytes { Array($0) } }

    /// A codable tag's string literal body exactly as the file had it, kept only when escaping `tag` again would
    /// not reproduce it (`\/`, `\u0041`): tags are opaque, so a file never gets a tag back respelled.
    var tagLiteral: [UInt8]? { tagLiteralCount == Element.none ? nil : withTagLiteralBytes { Array($0) } }

    var hasTag: Bool { tagCount != Element.none }

    var recordEnd: UInt32 { record.end }

    func withTagBytes<R>(_ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        try storage.withBytes(at: dataStart, count: hasTag ? tagCount : 0, body)
    }

    func withItemBytes<R>(_ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        try storage.withBytes(at: record.itemStart, count: itemCount, body)
    }

    func withLiteralBytes<R>(_ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        try storage.withBytes(
            at: record.literalStart, count: literalCount == Element.none ? 0 : literalCount, body)
    }

    func withTagLiteralBytes<R>(_ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        try storage.withBytes(
            at: record.tagLiteralStart, count: tagLiteralCount == Element.none ? 0 : tagLiteralCount, body)
    }

    /// The item as a parsed value. Items are validated on the way in, so this only fails on internal misuse.
    public var value: JSONValue {
        // Every item was checked or serialized as JSON when the element was made; only a value built in code
        // deeper than the parser's nesting limit would read as `.null`, and this getter has no error to give.
        (try? JSONParser.parse(item)) ?? .null
    }

    public var description: String {
        let text = String(decoding: item, as: UTF8.self)
        return tag.map { "\($0)(\(text))" } ?? text
    }

    public static func == (lhs: Element, rhs: Element) -> Bool {
        guard lhs.hasTag == rhs.hasTag else { return false }
        if lhs.storage === rhs.storage, lhs.recordStart == rhs.recordStart { return true }
        let sameTag = lhs.withTagBytes { left in rhs.withTagBytes { right in left.elementsEqual(right) } }
        guard sameTag else { return false }
        if lhs.withItemBytes({ left in rhs.withItemBytes { right in left.elementsEqual(right) } }) { return true }
        // Different bytes of two texts that spell every value one way only: different values, without a parse.
        if lhs.withItemBytes(JSONPlainText.isPlain), rhs.withItemBytes(JSONPlainText.isPlain) { return false }
        // The same members in the same order, not sorted (a struct as Swift encodes it), with a scalar that differs.
        if lhs.withItemBytes({ left in rhs.withItemBytes { right in JSONPlainText.differInAValue(left, right) } }) {
            return false
        }
        // Items are valid JSON; one the parser still refuses (nested too deep) counts as unequal: its bytes differ.
        guard let left = try? JSONParser.parse(lhs.item), let right = try? JSONParser.parse(rhs.item) else {
            return false
        }
        return left == right
    }

    /// The tag as a JSON string literal.
    func appendTagLiteral(to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        withTagBytes { JSONWriter.appendEscaped(buffer: $0, to: &out) }
        out.append(UInt8(ascii: "\""))
    }

    /// The element as the wire shows it: `{"type":…,"value":…}` or `{"value":…}`, on one line.
    public func appendWire(to out: inout [UInt8]) {
        if hasTag {
            out.append(literal: #"{"type":"#)
            appendTagLiteral(to: &out)
            out.append(literal: #","value":"#)
        } else {
            out.append(literal: #"{"value":"#)
        }
        withItemBytes { item in
            if JSONWriter.hasInsignificantWhitespace(item) {
                JSONWriter.appendCompact(item, to: &out)
            } else {
                out.append(contentsOf: item)
            }
        }
        out.append(UInt8(ascii: "}"))
    }

    /// Bytes this element holds, for memory accounting.
    var retainedBytes: Int { Int(recordEnd - recordStart) }
}

/// The on-disk format of a scene file (§3).
public enum SceneFormat: String, Sendable, Equatable, CaseIterable {
    /// `NavigationPath.CodableRepresentation`: `[tag, item, …]`, top of the stack first.
    case codable
    /// A homogeneous path encoded directly: `[value, …]`, root first.
    case array

    /// The format a non-empty path of these elements has, or `nil` when it mixes typed and untyped elements.
    public static func of(_ elements: [Element]) -> SceneFormat? {
        guard let first = elements.first else { return nil }
        let typed = first.hasTag
        guard elements.allSatisfy({ $0.hasTag == typed }) else { return nil }
        return typed ? .codable : .array
    }
}

/// How scene files are recognised: `scenes.format` in the configuration.
public enum FormatPolicy: String, Sendable, Equatable, CaseIterable {
    case auto
    case codable
    case array

    /// The format every scene must have, when pinned.
    public var pinned: SceneFormat? {
        switch self {
        case .auto: nil
        case .codable: .codable
        case .array: .array
        }
    }
}

/// A validated scene identifier: `^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`, not ending in `.json`.
public struct SceneID: Sendable, Hashable, Comparable, CustomStringConvertible {
    public let rawValue: String

    public init?(_ rawValue: String) {
        guard SceneID.isValid(rawValue) else { return nil }
        self.rawValue = rawValue
    }

    public var description: String { rawValue }

    public static func isValid(_ candidate: String) -> Bool {
        // On the contiguous bytes (every native string, small ones copied to the stack): a restart checks a hundred
        // thousand IDs, and walking a `String.UTF8View` generically cost a tenth of decoding its snapshot.
        if let valid = candidate.utf8.withContiguousStorageIfAvailable(isValid) { return valid }
        return isValid(Array(candidate.utf8))
    }

    private static func isValid<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> Bool {
        guard let first = bytes.first, bytes.count <= 128, isAlphanumeric(first) else { return false }
        for byte in bytes.dropFirst()
        where
            !(isAlphanumeric(byte) || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_")
            || byte == UInt8(ascii: "-"))
        {
            return false
        }
        return !hasJSONSuffix(bytes)
    }

    /// The scene a directory entry holds, or `nil` for every name the watcher must ignore.
    public init?(fileName: String) {
        // By bytes: a start lists every file of the directory, and `hasSuffix` and `dropLast` on a `String` walk
        // its characters.
        guard SceneID.hasJSONSuffix(fileName.utf8) else { return nil }
        self.init(String(Substring(fileName.utf8.dropLast(5))))
    }

    /// The scene a directory entry's name holds, read from the name's bytes as the kernel gives them (an inotify
    /// event's): a valid ID is ASCII, so its text needs no UTF-8 check and no intermediate string.
    public init?(fileName bytes: UnsafeRawBufferPointer) {
        guard SceneID.hasJSONSuffix(bytes) else { return nil }
        self.init(bytes: UnsafeRawBufferPointer(rebasing: bytes[bytes.startIndex..<(bytes.endIndex - 5)]))
    }

    /// The ID `bytes` spell, checked before a string is made of them.
    public init?(bytes: UnsafeRawBufferPointer) {
        guard SceneID.isValid(bytes) else { return nil }
        self.rawValue = String(decoding: bytes, as: UTF8.self)
    }

    /// Whether `bytes` spell a valid ID.
    public static func isValid(bytes: UnsafeRawBufferPointer) -> Bool { isValid(bytes) }

    private static func hasJSONSuffix<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> Bool {
        bytes.count >= 5 && bytes.suffix(5).elementsEqual(".json".utf8)
    }

    public var fileName: String { rawValue + ".json" }

    private static func isAlphanumeric(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }
}
