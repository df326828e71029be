import SceneSyncCore

@testable import SceneSyncDaemon

/// The scene files as the daemon leaves them, watched after every step: whose content each file holds (an app's
/// write, or the daemon's), which app writes the daemon read (``HarnessReadObserver``) or replaced on disk, and, once a group commit published its
/// changes, that each file it wrote holds the state committed for it (§3), unless an app wrote it since.
extension HarnessSchedule {
    /// What an app's write did to its file: the file holds that write's content until the daemon replaces it.
    mutating func noteAppWrite(_ scene: SceneID) {
        fileSeen[scene] = harness.file(scene)
        fileOwner[scene] = appWrites.count - 1
    }

    /// A file that changed since the last step and was not written by an app was written by the daemon: the app
    /// write it held, if any, is one the daemon replaced (and so must have read). A scene a client change was
    /// recorded for, whose group commit is over, holds the state committed unless an app wrote it since.
    mutating func checkFilesWritten() {
        let records = harness.core.store.history.records
        for record in records[committedRecordsChecked...] where record.origin.source == .client {
            committedUnchecked.insert(record.scene)
        }
        committedRecordsChecked = records.count
        let read = harness.reads.take()
        for scene in Self.scenes {
            let file = harness.file(scene)
            // Read by the daemon while the file held the same app write throughout the step: that write was read.
            if file == fileSeen[scene] ?? nil, read.contains(scene.fileName), let index = fileOwner[scene],
                appWrites[index].values != nil, !readAppWrites.contains(index)
            {
                readAppWrites.append(index)
            }
            guard file != fileSeen[scene] ?? nil else { continue }
            if let index = fileOwner.removeValue(forKey: scene), appWrites[index].values != nil {
                replacedAppWrites.append(index)
                // One file call replaced it, and it was not merged before: a group commit's rename displaced it.
                let start = recordsAtStepStart > 0 ? records[recordsAtStepStart - 1].clock.revision : 0
                let write = appWrites[index]
                let states = HarnessTimeline(records: records).states(write.scene, from: write.revision, through: start)
                if stepIsOneFileCall, !states.contains(where: { $0?.values == write.values }) {
                    displacedAppWrites.append(index)
                }
            }
            fileSeen[scene] = file
        }
        let inFlight = Set(harness.core.commitRun?.scenes ?? [])
        for scene in Self.scenes where committedUnchecked.contains(scene) && !inFlight.contains(scene) {
            committedUnchecked.remove(scene)
            guard fileOwner[scene] == nil else { continue }
            let state = harness.core.store.scene(scene)
            let file = harness.file(scene)
            if file != state?.fileBytes {
                let held = file.map { HarnessScene.values(ofFile: $0).description } ?? "no file"
                fail(
                    "\(scene): the file written is not the state committed: it holds \(held), the state is "
                        + "\(state.map { "v\($0.version) \(HarnessScene.values(ofFile: $0.fileBytes))" } ?? "none")")
            }
        }
    }
}
