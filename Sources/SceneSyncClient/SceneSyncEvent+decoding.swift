public import SceneSyncCore

extension SceneSyncEvent {
    /// Decodes an event object (`{"event": …}`). An unknown event name becomes ``unknown(name:_:)``; a known event
    /// with a malformed body is a protocol violation, because a subscriber that skipped it would silently diverge
    /// from the daemon.
    public init(json: JSONValue) throws(SceneSyncConnectionError) {
        guard let name = json["event"]?.stringValue else { throw .protocolViolation("an event without a name") }
        let what = "\(name) event"
        switch name {
        case "change": self = .change(try json.change(in: what))
        case "state": self = .state(try json.scene(in: what))
        case "synced": self = .synced(try json.clock(in: what))
        case "heartbeat": self = .heartbeat(try json.clock(in: what))
        case "resync": self = .resync(ResyncReason(rawValue: try json.string("reason", in: what)))
        case "phase":
            let phaseName = try json.string("phase", in: what)
            guard let phase = ScenePhase(rawValue: phaseName) else {
                throw .protocolViolation("\(what): unknown phase \(phaseName)")
            }
            self = .phase(scene: try json.sceneID("scene", in: what), phase: phase)
        case "snapshot":
            self = .snapshot(
                Snapshot(
                    path: try json.string("path", in: what), revision: try json.uint("revision", in: what),
                    reason: try json.string("reason", in: what)))
        case "warning":
            self = .warning(
                Warning(
                    code: try json.string("code", in: what), message: try json.string("message", in: what),
                    scene: json["scene"]?.stringValue, file: json["file"]?.stringValue))
        case "shutdown": self = .shutdown
        default: self = .unknown(name: name, json)
        }
    }

    /// The JSON object of an event a ``ResilientSubscription`` makes up itself, shaped like the daemon's events.
    var clientSideJSON: JSONValue {
        switch self {
        case .disconnected(let reason):
            return .object(JSONObject([("event", .string("disconnected")), ("reason", .string(reason))]))
        case .reconnected(let clock):
            let resumed: JSONValue =
                clock.map {
                    .object(
                        JSONObject([("epoch", .string($0.epoch)), ("revision", .number(JSONNumber($0.revision)))]))
                } ?? .null
            return .object(JSONObject([("event", .string("reconnected")), ("resumed_at", resumed)]))
        case .resync(let reason):
            return .object(JSONObject([("event", .string("resync")), ("reason", .string(reason.rawValue))]))
        default:
            return .object(JSONObject([("event", .string("unknown"))]))
        }
    }
}
