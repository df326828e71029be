import Foundation

@testable import SceneSyncDaemon

/// A subscriber to every scene, from the start and without initial states, that reads everything at once: the
/// wire's account of every change, which must be the engine's history, in order, with no gap (§6).
final class HarnessSubscriber {
    let outbox: Outbox
    /// The change events read, in order.
    var changes: [Change] = []
    /// What a subscriber that never lags must not read: a lag marker, a catch-up, a resync, a `state` event, a second
    /// `synced`.
    var unexpected: [String] = []
    private var synced = false

    struct Change: Equatable, CustomStringConvertible {
        let revision: UInt64
        let scene: String
        let kind: String
        let version: UInt64

        var description: String { "r\(revision) \(kind) \(scene) v\(version)" }
    }

    /// The `subscribe` request it sends once connected.
    static let request = Array(#"{"id":0,"op":"subscribe","scenes":["*"],"initial":false}"#.utf8)

    init(outbox: Outbox) {
        self.outbox = outbox
    }

    /// Reads every item queued for it now.
    func read() throws {
        for item in outbox.takeQueued() {
            switch item {
            case .line:
                break
            case .event(_, .change, let body):
                let object = try JSONSerialization.jsonObject(with: Data("{".utf8 + body + "}".utf8))
                guard let change = object as? [String: Any], let revision = change["revision"] as? NSNumber,
                    let scene = change["scene"] as? String, let kind = change["kind"] as? String,
                    let version = change["version"] as? NSNumber
                else {
                    unexpected.append("a change event without its members: \(String(decoding: body, as: UTF8.self))")
                    continue
                }
                changes.append(
                    Change(revision: revision.uint64Value, scene: scene, kind: kind, version: version.uint64Value))
            case .event(_, .synced, _) where !synced:
                synced = true
            case .event(_, .phase, _), .event(_, .snapshot, _), .event(_, .warning, _), .event(_, .heartbeat, _):
                break  // the phases, snapshots and warnings a schedule makes: not changes
            case .event(_, let name, let body):
                unexpected.append("a \(name.rawValue) event: \(String(decoding: body, as: UTF8.self))")
            case .lagged, .catchUp:
                unexpected.append("\(item)")
            }
        }
    }
}
