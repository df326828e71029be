import SceneSyncCore

@testable import SceneSyncDaemon

/// What a replay prints of a schedule besides its steps.
extension HarnessSchedule {
    /// The engine's history, one change a line, for the trace of a replay.
    func historyLines() -> [String] {
        harness.core.store.history.records.map { record in
            let path = record.path.map { text(SceneFileCodec.encode($0, as: record.format)) } ?? "deleted"
            let conflict = record.conflict.map { " conflict with \($0.origin.source)" } ?? ""
            return "r\(record.clock.revision) \(record.scene) v\(record.version) \(path) "
                + "by \(record.origin.source)\(conflict)"
        }
    }

    /// Bytes of a scene file as text, for messages.
    func text(_ bytes: [UInt8]) -> String {
        String(decoding: bytes, as: UTF8.self)
    }
}
