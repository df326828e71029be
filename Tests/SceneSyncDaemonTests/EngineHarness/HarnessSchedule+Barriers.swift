import SceneSyncCore
import SceneSyncTestKit

@testable import SceneSyncDaemon

/// `sync`, `phase background` and `snapshot` (§5, §6): each answers only once every scene-file change made before
/// the request was merged, so its revision (the clock of a `sync`, the snapshot's of the others) holds every app save
/// made before the request was handed over, and every change recorded by then; a snapshot's file holds the state
/// at its revision.
extension HarnessSchedule {
    mutating func checkBarrier(
        _ answer: HarnessClient.Answer, _ handed: HarnessClient.Moment, _ timeline: HarnessTimeline, _ label: String
    ) {
        guard answer.ok, let revision = answer.revision ?? answer.snapshot?.revision else {
            return fail("\(label) answered \(answer.text)")
        }
        if let missed = unmerged(0..<handed.appWrites, at: revision, timeline) {
            fail("\(label) answered \(answer.text), before \(missed)")
        }
        guard let snapshot = answer.snapshot else { return }
        guard let bytes = ScratchFiles.read(snapshot.path), let decoded = try? Snapshot.decode(bytes) else {
            return fail("\(label) answered \(answer.text), but its snapshot cannot be read")
        }
        for scene in Self.scenes {
            let held = decoded.scenes.first { $0.id == scene }.map { state in
                HarnessScene(version: state.version, values: HarnessScene.values(ofFile: state.fileBytes))
            }
            let state = timeline.state(scene, at: snapshot.revision)
            if held != state {
                fail(
                    "the snapshot of r\(snapshot.revision) holds \(scene) as \(held?.description ?? "none"), the "
                        + "history as \(state?.description ?? "none")")
            }
        }
    }

    /// The first of the app writes `writes` whose save is not in the scenes at `revision`, described; `nil` when
    /// every one is. Only each scene's last write counts (the app wrote over the ones before). It is in when a
    /// client's change came after it, or when the scene holds its content, or that of a later write (which the
    /// daemon may have read instead: the app wrote over it before the daemon read it).
    func unmerged(_ writes: Range<Int>, at revision: UInt64, _ timeline: HarnessTimeline) -> String? {
        for scene in Self.scenes {
            guard let index = writes.last(where: { appWrites[$0].scene == scene }) else { continue }
            let write = appWrites[index]
            let latest = timeline.last(scene, atOrBefore: revision)
            let held = latest?.harnessScene?.values
            let made = "app write w\(index) (\(scene) \(write.values?.description ?? "removed") at r\(write.revision))"
            // A client's change after the write was decided on it, or displaced it and kept it in its conflict.
            if let latest, latest.clock.revision > write.revision, latest.origin.source != .file { continue }
            // Otherwise the scene holds the write's content, or a later write's that the daemon read instead.
            let since = appWrites[index...].filter { $0.scene == scene }.map(\.values)
            if !since.contains(held) {
                return "\(made) was merged: \(scene) is \(held?.description ?? "none") at r\(revision)"
            }
        }
        return nil
    }
}
