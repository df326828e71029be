import SceneSyncCore

@testable import SceneSyncDaemon

extension EngineSimulation {
    /// What holds after every step (SPEC §3–§5).
    mutating func check() {
        // Revisions are handed out once each, in order (checked as they are published), and the store is at the last.
        if let last = broadcast.last, last.clock.revision != store.revision {
            fail("the store is at r\(store.revision) but r\(last.clock.revision) was the last change broadcast")
        }
        // Only revisions the state directory durably holds are handed out: a crash never hands one out twice.
        if store.revision > markOnDisk {
            fail("r\(store.revision) handed out with only r\(markOnDisk) durably reserved")
        }
        // A subscriber that does not read holds at most `subscriber_queue` change events (§6).
        let queued = outbox.queuedChangeEvents(subscription: 1)
        if queued > Self.subscriberQueue {
            fail("the subscriber's queue holds \(queued) change events, over its bound of \(Self.subscriberQueue)")
        }
        // One step at a time: the pipeline runs exactly while a step is in flight.
        if pipeline.isRunning != (inFlight != nil) {
            fail("the pipeline's running state disagrees with the step in flight")
        }
        // Every snapshot holds every change made before its trigger.
        for (trigger, held) in snapshotsHeld where held < (triggerRevisions[trigger] ?? 0) {
            fail("the snapshot for a trigger at r\(triggerRevisions[trigger] ?? 0) holds only r\(held)")
        }
        // A `phase background`'s snapshot holds every app save made before the request (§5), but one the app
        // itself wrote over before the daemon read it.
        for (phase, held) in snapshotsHeld {
            guard let before = phaseWritesBefore.removeValue(forKey: phase) else { continue }
            for (index, write) in appWrites.prefix(before).enumerated() {
                if let seenAt = write.seenAt {
                    if seenAt > held { fail("phase \(phase)'s snapshot of r\(held) misses app write w\(index)") }
                } else if !appWrites[(index + 1)...].contains(where: { $0.scene == write.scene }) {
                    fail("phase \(phase)'s snapshot of r\(held) misses app write w\(index), never read")
                }
            }
        }
    }

    /// A commit's files, once written: each scene written holds the state committed for it (after the displaced app
    /// writes were merged and the batch rebased on them).
    mutating func checkCommittedFiles(_ answers: CommitRun<[Request]>.Answers) {
        for (scene, bytes) in answers.batch.finalFiles where answers.failures[scene] == nil {
            if store.scene(scene)?.fileBytes != bytes {
                fail("\(scene): the file written is not the state committed")
            }
        }
    }

    /// What holds once everything delivered is merged and every step is done: every file equals its scene's state,
    /// the subscriber's view equals the store, every request was answered, and every app write the daemon read is
    /// in the state or in a conflict.
    mutating func checkSettled() {
        for scene in scenes where store.scene(scene)?.fileBytes != files[scene] {
            let state = store.scene(scene).map { String(decoding: $0.fileBytes, as: UTF8.self) } ?? "none"
            let file = files[scene].map { String(decoding: $0, as: UTF8.self) } ?? "none"
            fail("settled, \(scene) holds \(file) but its state is \(state)")
        }
        for scene in scenes {
            if !shows(subscriberView, scene) { fail("settled, the subscriber's view of \(scene) is not the state") }
            if !shows(outboxView, scene) {
                fail("settled, what the outbox's subscriber was handed of \(scene) is not the state")
            }
        }
        // Every `phase background` was answered with a snapshot.
        for phase in phaseWritesBefore.keys.sorted() {
            fail("settled, phase \(phase) was never answered with a snapshot")
        }
        if answered.count != submitted || clientAnswerOrder.count != clientSentOrder.count {
            fail("\(clientSentOrder.count) requests sent, \(clientAnswerOrder.count) answered")
        }
        if clientAnswersRead != clientSentOrder.count {
            fail("settled, the client read \(clientAnswersRead) of \(clientSentOrder.count) answers")
        }
        for (index, write) in appWrites.enumerated() where write.seen && !isKept(write) {
            fail("app write \(index) to \(write.scene) is neither in the state nor in a conflict")
        }
    }

    /// Whether a subscriber's view of a scene is the store's state of it (both absent included).
    func shows(_ view: View, _ scene: SceneID) -> Bool {
        let state = store.scene(scene)
        return view[scene]?.version == state?.version && view[scene]?.path == state?.path
    }

    /// Whether an app's write shows in a change of its scene, or in the conflict of one.
    func isKept(_ write: AppWrite) -> Bool {
        guard let bytes = write.bytes else { return true }
        guard let path = paths.first(where: { $0.bytes == bytes })?.elements else { return false }
        return broadcast.contains { record in
            record.scene == write.scene && (record.path == path || record.conflict?.path == path)
        } || store.scene(write.scene)?.path == path
    }
}
