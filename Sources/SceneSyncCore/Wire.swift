/// The JSON shapes of §6, written straight to bytes.
///
/// Each change is encoded once, as a *fragment* (an object's members without the braces), and every subscriber's
/// event is that fragment behind a short per-subscription prefix, so fan-out never re-encodes a path.
public enum Wire {
    /// How deep a line the daemon writes may nest, for whoever parses its answers and events.
    ///
    /// An element's value may nest as deep as the contract allows anywhere (``JSONParser/defaultMaxNesting``: a
    /// codable item is checked on its own), and the wire puts it deeper still: at most six levels, in a `history`
    /// answer's conflict (answer, `records`, record, `conflict`, `path`, element). A client that parsed lines with
    /// the contract's limit would take such a scene's every event for a protocol violation. Requests keep the
    /// contract's limit (§6).
    public static let maxLineNesting = JSONParser.defaultMaxNesting + 6

    /// `[{"type":…,"value":…},…]`, root first.
    public static func appendPath(_ path: [Element], to out: inout [UInt8]) {
        out.append(UInt8(ascii: "["))
        for (offset, element) in path.enumerated() {
            if offset > 0 { out.append(UInt8(ascii: ",")) }
            element.appendWire(to: &out)
        }
        out.append(UInt8(ascii: "]"))
    }

    /// ``appendPath(_:to:)`` of packed elements, without an array of them in between.
    static func appendPath(_ elements: ElementStorage, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "["))
        var first = true
        elements.forEach { element in
            if !first { out.append(UInt8(ascii: ",")) }
            first = false
            element.appendWire(to: &out)
        }
        out.append(UInt8(ascii: "]"))
    }

    /// `"scene":…,"version":…,"created":…,"modified":…,"format":…,"path":[…]` and `,"phase":…` when one was
    /// reported.
    public static func appendSceneMembers(_ state: SceneState, to out: inout [UInt8]) {
        appendSceneHeaderMembers(state, to: &out)
        out.append(literal: #","path":"#)
        appendPath(state.elements, to: &out)
        appendPhaseMember(state, to: &out)
    }

    /// `,"phase":…`, or nothing for a scene without a reported phase: absent rather than `null`, so that a scene
    /// without one reads exactly as it did before phases were kept.
    public static func appendPhaseMember(_ state: SceneState, to out: inout [UInt8]) {
        guard let phase = state.phase else { return }
        out.append(literal: #","phase":""#)
        out.append(contentsOf: phase.rawValue.utf8)
        out.append(UInt8(ascii: "\""))
    }

    /// `"scene":…,"version":…,"created":…,"modified":…,"format":…`: what the wire's scene object and a snapshot's
    /// scene entry share.
    public static func appendSceneHeaderMembers(_ state: SceneState, to out: inout [UInt8]) {
        out.append(literal: #""scene":"#)
        JSONWriter.appendString(state.id.rawValue, to: &out)
        out.append(literal: #","version":"#)
        JSONWriter.appendUInt(state.version, to: &out)
        out.append(literal: #","created":"#)
        JSONWriter.appendUInt(state.created, to: &out)
        out.append(literal: #","modified":"#)
        JSONWriter.appendUInt(state.modified, to: &out)
        out.append(literal: #","format":""#)
        out.append(contentsOf: state.format.rawValue.utf8)
        out.append(UInt8(ascii: "\""))
    }

    /// The scene as a JSON object; `null` for a missing one (as in a conflict's `current`).
    public static func appendScene(_ state: SceneState?, to out: inout [UInt8]) {
        guard let state else {
            out.append(literal: "null")
            return
        }
        out.append(UInt8(ascii: "{"))
        appendSceneMembers(state, to: &out)
        out.append(UInt8(ascii: "}"))
    }

    public static func appendOrigin(_ origin: Origin, to out: inout [UInt8]) {
        out.append(literal: #"{"source":""#)
        out.append(contentsOf: origin.source.rawValue.utf8)
        out.append(UInt8(ascii: "\""))
        if let client = origin.client {
            out.append(literal: #","client":"#)
            JSONWriter.appendString(client, to: &out)
        }
        if let uid = origin.uid {
            out.append(literal: #","uid":"#)
            JSONWriter.appendUInt(UInt64(uid), to: &out)
        }
        if let pid = origin.pid {
            out.append(literal: #","pid":"#)
            JSONWriter.appendInt(Int64(pid), to: &out)
        }
        if let host = origin.host {
            out.append(literal: #","host":"#)
            JSONWriter.appendString(host, to: &out)
        }
        out.append(UInt8(ascii: "}"))
    }

    public static func appendClockMembers(_ clock: Clock, to out: inout [UInt8]) {
        out.append(literal: #""epoch":"#)
        JSONWriter.appendString(clock.epoch, to: &out)
        out.append(literal: #","revision":"#)
        JSONWriter.appendUInt(clock.revision, to: &out)
    }

    /// The members of a `change` event or `history` record, without braces and without `subscription`.
    public static func appendChangeMembers(_ record: ChangeRecord, to out: inout [UInt8]) {
        appendClockMembers(record.clock, to: &out)
        out.append(literal: #","scene":"#)
        JSONWriter.appendString(record.scene.rawValue, to: &out)
        out.append(literal: #","kind":""#)
        out.append(contentsOf: record.kind.rawValue.utf8)
        out.append(literal: #"","version":"#)
        JSONWriter.appendUInt(record.version, to: &out)
        out.append(literal: #","format":""#)
        out.append(contentsOf: record.format.rawValue.utf8)
        out.append(UInt8(ascii: "\""))
        if let elements = record.elements {
            out.append(literal: #","path":"#)
            appendPath(elements, to: &out)
        }
        out.append(literal: #","origin":"#)
        appendOrigin(record.origin, to: &out)
        if let conflict = record.conflict {
            out.append(literal: #","conflict":{"path":"#)
            appendPath(conflict.path, to: &out)
            out.append(literal: #","origin":"#)
            appendOrigin(conflict.origin, to: &out)
            out.append(UInt8(ascii: "}"))
        }
    }

    /// A change record as a standalone object (a `history` record).
    public static func appendChangeRecord(_ record: ChangeRecord, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "{"))
        appendChangeMembers(record, to: &out)
        out.append(UInt8(ascii: "}"))
    }

    /// `{"code":…,"message":…[,"current":…]}`
    public static func appendError(_ error: SceneSyncError, to out: inout [UInt8]) {
        out.append(literal: #"{"code":""#)
        out.append(contentsOf: error.code.rawValue.utf8)
        out.append(literal: #"","message":"#)
        JSONWriter.appendString(error.message, to: &out)
        if error.code == .conflict {
            out.append(literal: #","current":"#)
            appendScene(error.current, to: &out)
        }
        out.append(UInt8(ascii: "}"))
    }

    // MARK: - Decoding

    /// Parses a wire path: an array of `{"type"?, "value"}` objects. Throws `bad_request` naming what is wrong.
    public static func decodePath(_ json: JSONValue) throws(SceneSyncError) -> [Element] {
        guard let array = json.arrayValue else { throw .badRequest("path must be an array of elements") }
        var elements: [Element] = []
        elements.reserveCapacity(array.count)
        for (index, item) in array.enumerated() {
            elements.append(try decodeElement(item, index: index))
        }
        return elements
    }

    public static func decodeElement(_ json: JSONValue, index: Int) throws(SceneSyncError) -> Element {
        guard let object = json.objectValue else { throw .badRequest("element \(index) must be an object") }
        guard let value = object["value"] else { throw .badRequest("element \(index) has no value") }
        var tag: String? = nil
        if let type = object["type"] {
            guard let string = type.stringValue, !string.isEmpty else {
                throw .badRequest("element \(index): type must be a non-empty string")
            }
            tag = string
        }
        return Element(tag: tag, value: value)
    }

    /// Parses a scene object as the wire shows it (for clients, and for a conflict's `current`). A `phase` this
    /// version does not know (from a newer daemon) reads as none: the scene itself is still good.
    public static func decodeScene(_ json: JSONValue) throws(SceneSyncError) -> SceneState {
        guard let name = json["scene"]?.stringValue, let id = SceneID(name) else {
            throw .badRequest("scene object without a valid scene ID")
        }
        guard let version = json["version"]?.uint64Value,
            let format = json["format"]?.stringValue.flatMap(SceneFormat.init),
            let pathJSON = json["path"]
        else { throw .badRequest("scene object \(name) is incomplete") }
        return SceneState(
            id: id, version: version, created: json["created"]?.uint64Value ?? 0,
            modified: json["modified"]?.uint64Value ?? 0, format: format, path: try decodePath(pathJSON),
            phase: json["phase"]?.stringValue.flatMap(ScenePhase.init))
    }

    public static func decodeOrigin(_ json: JSONValue) -> Origin {
        Origin(
            source: json["source"]?.stringValue.flatMap(Origin.Source.init) ?? .file,
            client: json["client"]?.stringValue, uid: json["uid"]?.uint64Value.flatMap { UInt32(exactly: $0) },
            pid: json["pid"]?.int64Value.flatMap { Int32(exactly: $0) }, host: json["host"]?.stringValue)
    }

    /// Parses a `change` event or `history` record.
    public static func decodeChange(_ json: JSONValue) throws(SceneSyncError) -> ChangeRecord {
        guard let epoch = json["epoch"]?.stringValue, let revision = json["revision"]?.uint64Value,
            let name = json["scene"]?.stringValue, let scene = SceneID(name),
            let kind = json["kind"]?.stringValue.flatMap(ChangeRecord.Kind.init),
            let version = json["version"]?.uint64Value,
            let format = json["format"]?.stringValue.flatMap(SceneFormat.init)
        else { throw .badRequest("malformed change record") }
        var conflict: Conflict? = nil
        if let conflictJSON = json["conflict"], let pathJSON = conflictJSON["path"] {
            conflict = Conflict(
                path: try decodePath(pathJSON), origin: conflictJSON["origin"].map(decodeOrigin) ?? .file)
        }
        return ChangeRecord(
            clock: Clock(epoch: epoch, revision: revision), scene: scene, kind: kind, version: version,
            format: format, path: try json["path"].map { (path) throws(SceneSyncError) in try decodePath(path) },
            origin: json["origin"].map(decodeOrigin) ?? .file, conflict: conflict)
    }
}
