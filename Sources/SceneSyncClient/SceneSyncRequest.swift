public import SceneSyncCore

/// One request of the socket protocol, ready to be sent on any connection.
///
/// Requests are encoded straight to bytes, like everything the daemon sends: element values travel exactly as the
/// caller gave them (number spelling, escapes), which a round trip through a JSON tree would not guarantee. The `id`
/// is added when the request is sent, because only the connection knows which ids are free.
public struct SceneSyncRequest: Sendable, Equatable, CustomStringConvertible {
    /// The op name (`get`, `push`, …).
    public let op: String
    /// The members after `id` and `op`, already encoded, each with its leading comma: `,"scene":"a","count":2`.
    let members: [UInt8]

    init(op: String, members: [UInt8] = []) {
        self.op = op
        self.members = members
    }

    /// An op this library has no constructor for, with its members given as JSON values: for tools that speak a
    /// newer daemon's protocol, and for tests of the daemon's error handling.
    public init(op: String, fields: [(String, JSONValue)]) {
        var builder = Builder()
        for (key, value) in fields { builder.json(key, value.serialized()) }
        self.init(op: op, members: builder.bytes)
    }

    /// The request line for `id`, newline included.
    public func line(id: UInt64) -> [UInt8] {
        var out: [UInt8] = Array(#"{"id":"#.utf8)
        out.reserveCapacity(members.count + op.utf8.count + 32)
        JSONWriter.appendUInt(id, to: &out)
        out.append(contentsOf: #","op":"#.utf8)
        JSONWriter.appendString(op, to: &out)
        out.append(contentsOf: members)
        out.append(contentsOf: "}\n".utf8)
        return out
    }

    /// The request line with id 0, for logs and tests.
    public var description: String {
        String(decoding: line(id: 0).dropLast(), as: UTF8.self)
    }

    // MARK: - The ops of the protocol

    /// Introduces the client. The name shows up as `origin.client` of every change this connection makes, so that
    /// watchers can tell who changed what.
    public static func hello(client: String?) -> SceneSyncRequest {
        var builder = Builder()
        if let client { builder.string("client", client) }
        return SceneSyncRequest(op: "hello", members: builder.bytes)
    }

    /// Every scene with its version, last-modified revision and depth, plus the daemon's clock.
    public static let list = SceneSyncRequest(op: "list")

    /// One scene with its path, plus the daemon's clock; `not_found` when there is no such scene.
    public static func get(_ scene: String) -> SceneSyncRequest {
        var builder = Builder()
        builder.string("scene", scene)
        return SceneSyncRequest(op: "get", members: builder.bytes)
    }

    /// Replaces a scene's whole path (root first). `format` pins the file format of a new or empty scene; without it
    /// the daemon picks `codable` when every element has a type and `array` otherwise.
    public static func set(
        _ scene: String, path: [Element], format: SceneFormat? = nil, ifVersion: UInt64? = nil
    ) -> SceneSyncRequest {
        var builder = Builder()
        builder.string("scene", scene)
        builder.path("path", path)
        if let format { builder.string("format", format.rawValue) }
        builder.uint("if_version", ifVersion)
        return SceneSyncRequest(op: "set", members: builder.bytes)
    }

    /// Appends `elements` (root first) on top of the stack.
    public static func push(_ scene: String, elements: [Element], ifVersion: UInt64? = nil) -> SceneSyncRequest {
        var builder = Builder()
        builder.string("scene", scene)
        builder.path("elements", elements)
        builder.uint("if_version", ifVersion)
        return SceneSyncRequest(op: "push", members: builder.bytes)
    }

    /// Removes `count` elements from the top; `out_of_range` when the stack is shallower.
    public static func pop(_ scene: String, count: UInt64 = 1, ifVersion: UInt64? = nil) -> SceneSyncRequest {
        var builder = Builder()
        builder.string("scene", scene)
        builder.uint("count", count)
        builder.uint("if_version", ifVersion)
        return SceneSyncRequest(op: "pop", members: builder.bytes)
    }

    /// Removes every element, leaving the root view.
    public static func popToRoot(_ scene: String, ifVersion: UInt64? = nil) -> SceneSyncRequest {
        var builder = Builder()
        builder.string("scene", scene)
        builder.json("to_root", Array("true".utf8))
        builder.uint("if_version", ifVersion)
        return SceneSyncRequest(op: "pop", members: builder.bytes)
    }

    /// Deletes the scene and its file.
    public static func delete(_ scene: String, ifVersion: UInt64? = nil) -> SceneSyncRequest {
        var builder = Builder()
        builder.string("scene", scene)
        builder.uint("if_version", ifVersion)
        return SceneSyncRequest(op: "delete", members: builder.bytes)
    }

    /// Starts a subscription. `patterns` are shell globs over scene IDs (`nil` sends none: every scene); `since`
    /// resumes after a clock instead of sending the current state; `initial: false` skips the initial state.
    public static func subscribe(
        patterns: [String]? = nil, since: Clock? = nil, initial: Bool = true
    ) -> SceneSyncRequest {
        var builder = Builder()
        if let patterns {
            var array: [UInt8] = [UInt8(ascii: "[")]
            for (offset, pattern) in patterns.enumerated() {
                if offset > 0 { array.append(UInt8(ascii: ",")) }
                JSONWriter.appendString(pattern, to: &array)
            }
            array.append(UInt8(ascii: "]"))
            builder.json("scenes", array)
        }
        if let since {
            var clock: [UInt8] = [UInt8(ascii: "{")]
            Wire.appendClockMembers(since, to: &clock)
            clock.append(UInt8(ascii: "}"))
            builder.json("since", clock)
        }
        if !initial { builder.json("initial", Array("false".utf8)) }
        return SceneSyncRequest(op: "subscribe", members: builder.bytes)
    }

    /// Ends a subscription on the connection that started it.
    public static func unsubscribe(_ subscription: UInt64) -> SceneSyncRequest {
        var builder = Builder()
        builder.uint("subscription", subscription)
        return SceneSyncRequest(op: "unsubscribe", members: builder.bytes)
    }

    /// The scene's change records, newest first, at most `limit` of them.
    public static func history(_ scene: String, limit: UInt64? = nil) -> SceneSyncRequest {
        var builder = Builder()
        builder.string("scene", scene)
        builder.uint("limit", limit)
        return SceneSyncRequest(op: "history", members: builder.bytes)
    }

    /// A barrier: answers once every scene-file change made before it has been merged. Tests and tools use it after
    /// writing files so that they never have to sleep.
    public static let sync = SceneSyncRequest(op: "sync")

    /// Tells the daemon a scene changed phase; `background` also writes a snapshot and answers once it is written.
    public static func phase(_ scene: String, _ phase: ScenePhase) -> SceneSyncRequest {
        var builder = Builder()
        builder.string("scene", scene)
        builder.string("phase", phase.rawValue)
        return SceneSyncRequest(op: "phase", members: builder.bytes)
    }

    /// Writes a snapshot now.
    public static let snapshot = SceneSyncRequest(op: "snapshot")
    /// Re-reads the configuration; answers after it has been applied (or with `invalid_config`).
    public static let reload = SceneSyncRequest(op: "reload")
    /// Counters and gauges of the running daemon.
    public static let stats = SceneSyncRequest(op: "stats")
    /// The daemon's metrics in the Prometheus text exposition format (the answer's `text`).
    public static let metrics = SceneSyncRequest(op: "metrics")

    /// Appends `,"key":value` members.
    struct Builder {
        var bytes: [UInt8] = []

        mutating func key(_ key: String) {
            bytes.append(UInt8(ascii: ","))
            JSONWriter.appendString(key, to: &bytes)
            bytes.append(UInt8(ascii: ":"))
        }

        mutating func string(_ key: String, _ value: String) {
            self.key(key)
            JSONWriter.appendString(value, to: &bytes)
        }

        mutating func uint(_ key: String, _ value: UInt64?) {
            guard let value else { return }
            self.key(key)
            JSONWriter.appendUInt(value, to: &bytes)
        }

        mutating func path(_ key: String, _ path: [Element]) {
            self.key(key)
            Wire.appendPath(path, to: &bytes)
        }

        mutating func json(_ key: String, _ value: [UInt8]) {
            self.key(key)
            bytes.append(contentsOf: value)
        }
    }
}
