import SceneSyncCore

/// A request line, parsed and validated off the engine so that the owner only does the work that needs it.
struct Request: Sendable {
    /// The request's `id`, serialized as it will be echoed (`null` when absent).
    var id: [UInt8]
    var command: Command
}

/// A request that cannot be served, with the id to answer it with (`null` when the line is not a JSON object).
struct RequestError: Error {
    var id: [UInt8]
    var error: SceneSyncError
}

/// Every op of §6 with its fields checked.
enum Command: Sendable {
    case hello(client: String?)
    case list
    case get(SceneID)
    case change(SceneStore.Operation, SceneID, ifVersion: UInt64?)
    case subscribe(patterns: [ScenePattern], since: Clock?, initial: Bool)
    case unsubscribe(UInt64)
    case history(SceneID, limit: Int?)
    case sync
    case phase(SceneID, ScenePhase)
    case snapshot
    case reload
    case stats
    /// The Prometheus text exposition of the daemon's metrics.
    case metrics

    /// Ops that change state need write access (§6 Access).
    var isChanging: Bool {
        switch self {
        case .change, .phase, .snapshot, .reload: true
        default: false
        }
    }

    /// Parses one line. The error carries the id to answer with (`null` when the line is not a JSON object).
    static func parse(_ line: [UInt8]) -> Result<Request, RequestError> {
        if let change = parseChange(line) { return .success(change) }
        return parseAnyRequest(line)
    }

    /// ``parse(_:)`` of any request: what a `set` or `push` that ``parseChange(_:)`` does not read falls back to.
    static func parseAnyRequest(_ line: [UInt8]) -> Result<Request, RequestError> {
        if let parsed = parseBySpans(line) { return parsed }
        let json: JSONValue
        do throws(JSONError) {
            json = try JSONParser.parse(line)
        } catch {
            return .failure(RequestError(id: ResponseWriter.nullID, error: .badRequest("not a JSON object: \(error)")))
        }
        guard let object = json.objectValue else {
            return .failure(
                RequestError(id: ResponseWriter.nullID, error: .badRequest("a request must be a JSON object")))
        }
        return request(object) { (key) throws(SceneSyncError) in
            try object[key].map { (json) throws(SceneSyncError) in try Wire.decodePath(json) }
        }
    }

    /// The common case, a well-formed request object, without a tree of the whole line: the members are found in
    /// one pass, the small ones parsed on their own, and a path's elements taken straight to their stored bytes.
    /// `nil` when the line is not a JSON object: ``parse(_:)`` then says exactly why, as before.
    private static func parseBySpans(_ line: [UInt8]) -> Result<Request, RequestError>? {
        // Not a well-formed object: `parse(_:)` parses the line again and names the exact error.
        guard let spans = try? JSONParser.objectMemberSpans(of: line) else { return nil }
        var members: [(String, JSONValue)] = []
        members.reserveCapacity(spans.count)
        for (key, span) in spans where !Self.elementKeys.contains(key) {
            guard let value = try? JSONParser.parse(line, in: span) else { return nil }  // as above
            members.append((key, value))
        }
        let object = JSONObject(members)
        return request(object) { (key) throws(SceneSyncError) in
            try spans[key].map { (span) throws(SceneSyncError) in try Wire.decodePath(line, span: span) }
        }
    }

    /// The id and op checks both decoders share; `elements` is how each one decodes a path member.
    private static func request(
        _ object: JSONObject, elements: (String) throws(SceneSyncError) -> [Element]?
    ) -> Result<Request, RequestError> {
        var id = ResponseWriter.nullID
        if let rawID = object["id"] {
            switch rawID {
            case .array, .object:
                return .failure(RequestError(id: ResponseWriter.nullID, error: .badRequest("id must be a JSON scalar")))
            default:
                id = rawID.serialized()
            }
        }
        guard let opValue = object["op"] else {
            return .failure(RequestError(id: id, error: .badRequest("request has no op")))
        }
        guard let op = opValue.stringValue else {
            return .failure(RequestError(id: id, error: .badRequest("op must be a string")))
        }
        do throws(SceneSyncError) {
            let command = try parse(op: op, object) { (key) throws(SceneSyncError) in
                try elements(key)
            }
            return .success(Request(id: id, command: command))
        } catch {
            return .failure(RequestError(id: id, error: error))
        }
    }

    /// The members that hold elements, decoded by ``Wire/decodePath(_:span:)`` rather than parsed into a tree.
    private static let elementKeys: Set<String> = ["path", "elements"]

    /// `elements(key)` decodes the member `key` as a path, `nil` when there is none.
    private static func parse(
        op: String, _ request: JSONObject, elements: (String) throws(SceneSyncError) -> [Element]?
    ) throws(SceneSyncError) -> Command {
        switch op {
        case "hello":
            return .hello(client: try optionalString(request, "client"))
        case "list": return .list
        case "get": return .get(try scene(request))
        case "set":
            guard let path = try elements("path") else { throw .badRequest("set needs a path") }
            var format: SceneFormat? = nil
            if let name = try optionalString(request, "format") {
                guard let parsed = SceneFormat(rawValue: name) else {
                    throw .badRequest("format must be \"codable\" or \"array\"")
                }
                format = parsed
            }
            return .change(.set(path: path, format: format), try scene(request), ifVersion: try ifVersion(request))
        case "push":
            guard let pushed = try elements("elements") else { throw .badRequest("push needs elements") }
            return .change(.push(pushed), try scene(request), ifVersion: try ifVersion(request))
        case "pop":
            let toRoot = try optionalBool(request, "to_root") ?? false
            let count = try optionalUInt(request, "count")
            if toRoot, count != nil { throw .badRequest("give either count or to_root, not both") }
            let operation: SceneStore.Operation = toRoot ? .popToRoot : .pop(count: Int(clamping: count ?? 1))
            return .change(operation, try scene(request), ifVersion: try ifVersion(request))
        case "delete":
            return .change(.delete, try scene(request), ifVersion: try ifVersion(request))
        case "subscribe":
            var patterns = [ScenePattern.all]
            if let value = request["scenes"] {
                guard let array = value.arrayValue, !array.isEmpty else {
                    throw .badRequest("scenes must be a non-empty array of glob patterns")
                }
                patterns = try array.map { (item) throws(SceneSyncError) in
                    guard let text = item.stringValue, !text.isEmpty else {
                        throw .badRequest("scenes must hold non-empty strings")
                    }
                    return ScenePattern(text)
                }
            }
            var since: Clock? = nil
            if let value = request["since"], value != .null {
                guard let epoch = value["epoch"]?.stringValue, let revision = value["revision"]?.uint64Value else {
                    throw .badRequest("since must be a clock {\"epoch\", \"revision\"}")
                }
                since = Clock(epoch: epoch, revision: revision)
            }
            return .subscribe(patterns: patterns, since: since, initial: try optionalBool(request, "initial") ?? true)
        case "unsubscribe":
            guard let subscription = try optionalUInt(request, "subscription") else {
                throw .badRequest("unsubscribe needs a subscription")
            }
            return .unsubscribe(subscription)
        case "history":
            let limit = try optionalUInt(request, "limit").map { Int(clamping: $0) }
            return .history(try scene(request), limit: limit)
        case "sync": return .sync
        case "phase":
            guard let name = try optionalString(request, "phase"), let phase = ScenePhase(rawValue: name) else {
                throw .badRequest("phase must be \"active\", \"inactive\" or \"background\"")
            }
            return .phase(try scene(request), phase)
        case "snapshot": return .snapshot
        case "reload": return .reload
        case "stats": return .stats
        case "metrics": return .metrics
        default:
            throw SceneSyncError(.unknownOp, "unknown op \"\(op)\"")
        }
    }

    private static func scene(_ request: JSONObject) throws(SceneSyncError) -> SceneID {
        guard let value = request["scene"] else { throw .badRequest("request needs a scene") }
        guard let name = value.stringValue, let scene = SceneID(name) else {
            throw SceneSyncError(
                .invalidScene,
                "invalid scene ID \(String(decoding: value.serialized(), as: UTF8.self)): must match "
                    + "[A-Za-z0-9][A-Za-z0-9._-]{0,127} and not end in .json")
        }
        return scene
    }

    private static func ifVersion(_ request: JSONObject) throws(SceneSyncError) -> UInt64? {
        try optionalUInt(request, "if_version")
    }

    private static func optionalString(_ request: JSONObject, _ key: String) throws(SceneSyncError) -> String? {
        guard let value = request[key], value != .null else { return nil }
        guard let string = value.stringValue else { throw .badRequest("\(key) must be a string") }
        return string
    }

    private static func optionalBool(_ request: JSONObject, _ key: String) throws(SceneSyncError) -> Bool? {
        guard let value = request[key], value != .null else { return nil }
        guard let bool = value.boolValue else { throw .badRequest("\(key) must be true or false") }
        return bool
    }

    private static func optionalUInt(_ request: JSONObject, _ key: String) throws(SceneSyncError) -> UInt64? {
        guard let value = request[key], value != .null else { return nil }
        guard let number = value.uint64Value else { throw .badRequest("\(key) must be a non-negative integer") }
        return number
    }
}
