@testable import SceneSyncCore

/// libFuzzer harness for the daemon's request decoder, ``Command/parse(_:)``, compiled here together with
/// `Command.swift` and `ResponseWriter.swift` from the daemon's sources.
///
/// Every line a client sends must end as a request or as an error answer that carries the right id (§6): the
/// request's scalar `id`, or `null` when the line is not a JSON object or the id is not a scalar. The answer must
/// itself be one valid JSON line, and a decoded request must hold exactly the fields the line gave. A `set` or
/// `push` that the one-pass path reads (``Command/parseChange(_:)``) must read as the general parser reads it.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCommand(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    checkRequestLine(fuzzInput(data, size))
    return 0
}

/// The ops of §6 that `Command.parse` knows.
let knownOps: Set<String> = [
    "hello", "list", "get", "set", "push", "pop", "delete", "subscribe", "unsubscribe", "history", "sync", "phase",
    "snapshot", "reload", "stats", "metrics",
]

func checkRequestLine(_ line: [UInt8]) {
    let object = (try? JSONParser.parse(line))?.objectValue
    var expectedID = JSONValue.null
    if let id = object?["id"] {
        switch id {
        case .array, .object: break
        default: expectedID = id
        }
    }
    let op = object?["op"]?.stringValue
    if let change = Command.parseChange(line) { checkSameChange(change, Command.parseAnyRequest(line), line) }
    switch Command.parse(line) {
    case .success(let request):
        let context = "request \(show(line))"
        guard let object, let op else { fatalError("accepted without an object and an op: \(context)") }
        require(knownOps.contains(op), "accepted an unknown op: \(context)")
        require(request.id == expectedID.serialized(), "id \(show(request.id)): \(context)")
        var response = ResponseWriter(id: request.id)
        response.append("revision", uint: 1)
        checkAnswerLine(response.finish(), id: expectedID, ok: true, code: nil, context)
        checkCommand(request.command, op: op, object, context)
    case .failure(let failure):
        let context = "\(failure.error) for \(show(line))"
        require(failure.id == expectedID.serialized(), "error id \(show(failure.id)): \(context)")
        let code = failure.error.code
        if object == nil || object?["op"] == nil || op == nil
            || expectedID == .null && object?["id"] != nil
                && object?["id"] != .null
        {
            require(code == .badRequest, "expected bad_request: \(context)")
        } else if let op, !knownOps.contains(op) {
            require(code == .unknownOp, "expected unknown_op: \(context)")
        } else {
            require(code == .badRequest || code == .invalidScene, "unexpected code: \(context)")
        }
        if code == .invalidScene { require(object?["scene"] != nil, "invalid_scene without a scene: \(context)") }
        checkAnswerLine(
            ResponseWriter.error(id: failure.id, failure.error), id: expectedID, ok: false, code: code, context)
    }
}

/// The one-pass path read `line` as the general parser does: the same id, scene, version check and operation.
func checkSameChange(_ change: Request, _ general: Result<Request, RequestError>, _ line: [UInt8]) {
    let context = "one-pass \(show(line))"
    guard case .success(let other) = general else { fatalError("read by the one-pass path only: \(context)") }
    require(change.id == other.id, "id: \(context)")
    guard case .change(let operation, let scene, let ifVersion) = change.command,
        case .change(let otherOperation, let otherScene, let otherIfVersion) = other.command
    else { fatalError("not both changes: \(context)") }
    require(operation == otherOperation && scene == otherScene && ifVersion == otherIfVersion, "change: \(context)")
}

/// An answer is one JSON object on one `\n`-terminated line, echoing the id.
func checkAnswerLine(_ answer: [UInt8], id: JSONValue, ok: Bool, code: ErrorCode?, _ context: String) {
    require(answer.last == 0x0A, "answer without a newline: \(context)")
    let body = Array(answer.dropLast())
    require(!body.contains(0x0A), "answer spans lines: \(show(answer)) for \(context)")
    guard let value = try? JSONParser.parse(body), value.objectValue != nil else {
        fatalError("answer is not a JSON object: \(show(answer)) for \(context)")
    }
    require(value["id"] == id, "answer id \(String(describing: value["id"])): \(context)")
    require(value["ok"] == .bool(ok), "answer ok: \(context)")
    if let code {
        require(value["error"]?["code"]?.stringValue == code.rawValue, "answer code: \(show(answer)) for \(context)")
        require(value["error"]?["message"]?.stringValue != nil, "answer message: \(show(answer)) for \(context)")
    }
}

/// The decoded command says what the line said.
func checkCommand(_ command: Command, op: String, _ object: JSONObject, _ context: String) {
    func expectOp(_ name: String) { require(op == name, "op \(op) decoded as \(command): \(context)") }
    func expectScene(_ scene: SceneID) {
        require(SceneID.isValid(scene.rawValue), "invalid scene accepted: \(context)")
        require(object["scene"]?.stringValue == scene.rawValue, "scene \(scene): \(context)")
    }
    func expectUInt(_ key: String, _ value: UInt64?) {
        let given = object[key] == .null ? nil : object[key]?.uint64Value
        require(given == value, "\(key) \(String(describing: value)): \(context)")
    }
    require(
        command.isChanging == ["set", "push", "pop", "delete", "phase", "snapshot", "reload"].contains(op),
        "isChanging of \(op): \(context)")
    switch command {
    case .hello(let client):
        expectOp("hello")
        require(client == object["client"]?.stringValue, "client: \(context)")
    case .list: expectOp("list")
    case .get(let scene):
        expectOp("get")
        expectScene(scene)
    case .change(let operation, let scene, let ifVersion):
        expectScene(scene)
        expectUInt("if_version", ifVersion)
        switch operation {
        case .set(let path, let format):
            expectOp("set")
            require(format?.rawValue == object["format"]?.stringValue, "format: \(context)")
            checkWirePath(path, context)
        case .push(let elements):
            expectOp("push")
            checkWirePath(elements, context)
        case .pop(let count):
            expectOp("pop")
            require(object["to_root"]?.boolValue != true, "to_root decoded as a count: \(context)")
            require(count == Int(clamping: object["count"]?.uint64Value ?? 1), "count \(count): \(context)")
        case .popToRoot:
            expectOp("pop")
            require(object["to_root"] == .bool(true), "to_root: \(context)")
        case .delete: expectOp("delete")
        }
    case .subscribe(let patterns, let since, _):
        expectOp("subscribe")
        require(!patterns.isEmpty, "no patterns: \(context)")
        if let since { require(object["since"]?["revision"]?.uint64Value == since.revision, "since: \(context)") }
    case .unsubscribe(let subscription):
        expectOp("unsubscribe")
        expectUInt("subscription", subscription)
    case .history(let scene, let limit):
        expectOp("history")
        expectScene(scene)
        require(limit.map { $0 >= 0 } ?? true, "negative limit: \(context)")
    case .sync: expectOp("sync")
    case .phase(let scene, let phase):
        expectOp("phase")
        expectScene(scene)
        require(object["phase"]?.stringValue == phase.rawValue, "phase: \(context)")
    case .snapshot: expectOp("snapshot")
    case .reload: expectOp("reload")
    case .stats: expectOp("stats")
    case .metrics: expectOp("metrics")
    }
}

/// A decoded path survives the wire: written as the daemon writes it, it decodes to an equal path, and each
/// element's item is valid JSON.
func checkWirePath(_ path: [Element], _ context: String) {
    var wire: [UInt8] = []
    Wire.appendPath(path, to: &wire)
    guard let json = try? JSONParser.parse(wire) else { fatalError("wire path does not parse: \(show(wire))") }
    do throws(SceneSyncError) {
        let decoded = try Wire.decodePath(json)
        require(decoded == path, "wire path round trip: \(show(wire)) for \(context)")
    } catch {
        fatalError("wire path refused (\(error)): \(show(wire)) for \(context)")
    }
    for element in path {
        require((try? JSONParser.validate(element.item)) != nil, "invalid item \(element): \(context)")
    }
}
