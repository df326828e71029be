/// Text from bytes that must be UTF-8, for the names and members read on every start and every file event.
///
/// `String(validating:as:)` validates through a generic routine whose type metadata the runtime looks up on every
/// call: reading the 100,000 names of a start-up's file index spent more there than in the index's own parse. Scene
/// IDs, formats and marker names are ASCII, which `String(decoding:as:)` takes without that lookup; anything else is
/// still validated, and refused when it is not UTF-8.
public enum UTF8Text {
    public static func string(_ bytes: UnsafeRawBufferPointer) -> String? {
        bytes.withMemoryRebound(to: UInt8.self) { string($0) }
    }

    public static func string(_ bytes: UnsafeBufferPointer<UInt8>) -> String? {
        if bytes.allSatisfy({ $0 < 0x80 }) { return String(decoding: bytes, as: UTF8.self) }
        return String(validating: bytes, as: UTF8.self)
    }

    public static func string(_ bytes: ArraySlice<UInt8>) -> String? {
        bytes.withUnsafeBufferPointer { string($0) }
    }
}
