import SceneSyncCore

/// A request a harness client sends, as it stands before the engine decides it: what its answer is checked against.
enum HarnessRequest {
    case set(SceneID, values: [Int], ifVersion: UInt64?)
    case push(SceneID, values: [Int], ifVersion: UInt64?)
    case pop(SceneID, count: Int, ifVersion: UInt64?)
    case delete(SceneID, ifVersion: UInt64?)
    case get(SceneID)
    case sync
    /// `phase` of a scene: `background` is answered with a snapshot, `active` at once.
    case phase(SceneID, background: Bool)
    case snapshot

    /// The scene a change or a read is of.
    var scene: SceneID? {
        switch self {
        case .set(let scene, _, _), .push(let scene, _, _), .pop(let scene, _, _), .delete(let scene, _),
            .get(let scene), .phase(let scene, _):
            scene
        case .sync, .snapshot: nil
        }
    }

    var ifVersion: UInt64? {
        switch self {
        case .set(_, _, let ifVersion), .push(_, _, let ifVersion), .pop(_, _, let ifVersion),
            .delete(_, let ifVersion):
            ifVersion
        case .get, .sync, .phase, .snapshot: nil
        }
    }

    /// Whether it changes a scene (served by a group commit).
    var isChange: Bool {
        switch self {
        case .set, .push, .pop, .delete: true
        case .get, .sync, .phase, .snapshot: false
        }
    }

    /// Whether its answer must hold every app save made before it (§5, §6): a `sync` or a snapshot.
    var isBarrier: Bool {
        switch self {
        case .sync, .phase(_, background: true), .snapshot: true
        default: false
        }
    }

    /// What the change makes of the scene as it was (`nil`: no scene).
    enum Outcome: Equatable {
        case values([Int])
        case deleted
        /// It cannot apply: a `pop` deeper than the scene, a `delete` or `pop` of no scene.
        case refused
    }

    func outcome(after before: HarnessScene?) -> Outcome {
        switch self {
        case .set(_, let values, _):
            return .values(values)
        case .push(_, let values, _):
            return .values((before?.values ?? []) + values)
        case .pop(_, let count, _):
            guard let before, count <= before.values.count else { return .refused }
            return .values(Array(before.values.dropLast(count)))
        case .delete:
            return before == nil ? .refused : .deleted
        case .get, .sync, .phase, .snapshot:
            return .refused
        }
    }

    /// The request line a client writes for it.
    func line(id: Int) -> String {
        var members = "\"id\":\(id)"
        switch self {
        case .set(let scene, let values, _):
            members += ",\"op\":\"set\",\"scene\":\"\(scene)\",\"path\":\(Self.elements(values))"
        case .push(let scene, let values, _):
            members += ",\"op\":\"push\",\"scene\":\"\(scene)\",\"elements\":\(Self.elements(values))"
        case .pop(let scene, let count, _):
            members += ",\"op\":\"pop\",\"scene\":\"\(scene)\",\"count\":\(count)"
        case .delete(let scene, _):
            members += ",\"op\":\"delete\",\"scene\":\"\(scene)\""
        case .get(let scene):
            members += ",\"op\":\"get\",\"scene\":\"\(scene)\""
        case .sync:
            members += ",\"op\":\"sync\""
        case .phase(let scene, let background):
            members += ",\"op\":\"phase\",\"scene\":\"\(scene)\",\"phase\":\"\(background ? "background" : "active")\""
        case .snapshot:
            members += ",\"op\":\"snapshot\""
        }
        if let ifVersion { members += ",\"if_version\":\(ifVersion)" }
        return "{" + members + "}"
    }

    /// Codable elements of type `T.V`, root first, as the wire has them.
    static func elements(_ values: [Int]) -> String {
        "[" + values.map { "{\"type\":\"T.V\",\"value\":\($0)}" }.joined(separator: ",") + "]"
    }
}
