import SceneSyncClient
import SceneSyncCore

/// One readable line per event for `scenesync watch`, e.g. `r42 change scene1 v3 [a, b, c] (client foo)`.
///
/// Lines about the stream itself (synced, resync, connection changes) start with `-- ` so that they stand out from
/// the scenes' own events. Heartbeats print nothing: they only prove liveness, which the absence of a
/// `-- disconnected` line already does.
enum EventLine {
    static func text(_ event: SceneSyncEvent) -> String? {
        switch event {
        case .change(let record):
            var line = "\(Format.revision(record.clock.revision)) \(record.kind == .delete ? "delete" : "change")"
            line += " \(record.scene) v\(record.version)"
            if let path = record.path { line += " " + Format.path(path) }
            line += " (\(Format.origin(record.origin)))"
            if let conflict = record.conflict {
                line += " conflict: overwrote \(Format.path(conflict.path)) (\(Format.origin(conflict.origin)))"
            }
            return line
        case .state(let scene):
            return
                "state \(scene.id) v\(scene.version) \(Format.path(scene.path)) (modified \(Format.revision(scene.modified)))"
        case .synced(let clock):
            return "-- synced at \(Format.revision(clock.revision)) (epoch \(clock.epoch))"
        case .resync(let reason):
            return "-- resync (\(reason.rawValue)): \(explanation(reason))"
        case .phase(let scene, let phase):
            return "phase \(scene) \(phase.rawValue)"
        case .snapshot(let snapshot):
            return "snapshot \(Format.revision(snapshot.revision)) (\(snapshot.reason)) \(snapshot.path)"
        case .warning(let warning):
            let subject = warning.scene.map { " \($0)" } ?? ""
            return "warning \(warning.code)\(subject): \(warning.message)"
        case .heartbeat:
            return nil
        case .shutdown:
            return "-- daemon shutting down"
        case .disconnected(let reason):
            return "-- disconnected (\(reason)), reconnecting"
        case .reconnected(let clock):
            guard let clock else { return "-- reconnected" }
            return "-- reconnected, resumed at \(Format.revision(clock.revision))"
        case .unknown(let name, let json):
            return "event \(name) \(String(decoding: json.serialized(), as: UTF8.self))"
        }
    }

    static func explanation(_ reason: SceneSyncEvent.ResyncReason) -> String {
        switch reason {
        case .epoch: "daemon restarted without a clean shutdown; current state follows"
        case .compacted: "the missed changes are no longer in the daemon's history; current state follows"
        case .lagged: "this watcher fell behind and events were dropped; current state follows"
        case .interrupted: "the connection was lost before the state was complete; current state follows"
        case .other: "current state follows"
        }
    }
}
