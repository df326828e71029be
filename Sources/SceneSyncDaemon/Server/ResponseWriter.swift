import SceneSyncCore

/// Builds one response line: `{"id":…,"ok":true,…}` or `{"id":…,"ok":false,"error":{…}}`.
struct ResponseWriter {
    private var bytes: [UInt8]

    /// `id` is the request's id already serialized (or `null`).
    init(id: [UInt8]) {
        // One allocation for the line: reserved before the first byte (an array made from a literal and then
        // reserved is two).
        bytes = []
        bytes.reserveCapacity(128)
        bytes.append(literal: #"{"id":"#)
        bytes.append(contentsOf: id)
        bytes.append(literal: #","ok":true"#)
    }

    static func error(id: [UInt8], _ error: SceneSyncError) -> [UInt8] {
        var bytes = Array(#"{"id":"#.utf8)
        bytes.append(contentsOf: id)
        bytes.append(literal: #","ok":false,"error":"#)
        Wire.appendError(error, to: &bytes)
        bytes.append(literal: "}\n")
        return bytes
    }

    static let nullID: [UInt8] = Array("null".utf8)

    /// Byte by byte around the name: array literals here would be allocations of their own.
    private mutating func key(_ key: String) {
        bytes.append(UInt8(ascii: ","))
        bytes.append(UInt8(ascii: "\""))
        bytes.append(contentsOf: key.utf8)
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
    }

    mutating func append(_ name: String, uint value: UInt64) {
        key(name)
        JSONWriter.appendUInt(value, to: &bytes)
    }

    mutating func append(_ name: String, int value: Int) {
        key(name)
        JSONWriter.appendInt(Int64(value), to: &bytes)
    }

    mutating func append(_ name: String, string value: String) {
        key(name)
        JSONWriter.appendString(value, to: &bytes)
    }

    /// Appends a member whose value is already JSON.
    mutating func append(_ name: String, json value: [UInt8]) {
        key(name)
        bytes.append(contentsOf: value)
    }

    /// Appends members already encoded (`"a":1,"b":2`).
    mutating func append(members: [UInt8]) {
        guard !members.isEmpty else { return }
        bytes.append(UInt8(ascii: ","))
        bytes.append(contentsOf: members)
    }

    mutating func appendClock(_ clock: Clock) {
        append("epoch", string: clock.epoch)
        append("revision", uint: clock.revision)
    }

    consuming func finish() -> [UInt8] {
        bytes.append(literal: "}\n")
        return bytes
    }
}
