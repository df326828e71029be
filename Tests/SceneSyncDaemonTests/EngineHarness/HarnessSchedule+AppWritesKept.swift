import SceneSyncCore

@testable import SceneSyncDaemon

/// §3: an app's write the daemon read is never lost: it is a state of its scene, or the `conflict` of the change
/// that replaced it (a client change written over an app's write that its rename displaced carries the app's path
/// as its conflict). The writes the harness knows the daemon read are those the kernel saw it read while their file
/// held them, and those it replaced on disk (HarnessSchedule+FilesWritten.swift); the last write of each scene is
/// in the state once settled (``checkFiles()``).
extension HarnessSchedule {
    mutating func checkAppWritesKept() {
        let records = harness.core.store.history.records
        let timeline = HarnessTimeline(records: records)
        for index in Set(replacedAppWrites + readAppWrites).sorted() {
            let write = appWrites[index]
            guard let values = write.values else { continue }
            // A state the scene had when the app wrote or since (the same content as the state then is known), or
            // the conflict of a later change.
            let states = timeline.states(write.scene, from: write.revision, through: harness.core.store.revision)
            let keptBy = records.filter { record in
                guard record.scene == write.scene, record.clock.revision > write.revision,
                    let conflict = record.conflict
                else { return false }
                return HarnessScene.values(
                    ofFile: SceneFileCodec.encode(conflict.path, as: SceneFormat.of(conflict.path) ?? record.format))
                    == values
            }
            let inConflict = !keptBy.isEmpty
            if displacedAppWrites.contains(index), !keptBy.contains(where: { $0.origin.source == .client }) {
                fail(
                    "app write w\(index) (\(write.scene) \(values) at r\(write.revision)) was displaced by a group "
                        + "commit's write, and no client change carries it as its conflict")
            } else if !inConflict, !states.contains(where: { $0?.values == values }) {
                fail(
                    "app write w\(index) (\(write.scene) \(values) at r\(write.revision)) was read by the daemon, "
                        + "and is neither in a state nor in a conflict")
            }
        }
    }
}
