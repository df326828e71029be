import SceneSyncCore

@testable import SceneSyncDaemon

/// The rules of SPEC §3-§4 that a settled schedule must keep, checked on the engine's store, the files on disk, the
/// durable revision mark and the answers the clients read.
extension HarnessSchedule {
    /// §4: a revision is handed out only once a mark at or above it is durable (checked after every step, and at each
    /// answer).
    mutating func checkDurable(_ revision: UInt64) {
        let mark = (try? harness.stateDirectory.highWaterMark()) ?? nil
        if (mark ?? 0) < revision {
            fail("r\(revision) handed out with only r\(mark ?? 0) durably reserved")
        }
    }

    /// Everything checked once the schedule settled.
    mutating func checkSettled() {
        checkRevisions()
        checkAnswers()
        checkFiles()
        checkAcknowledgedInFiles()
        checkSubscriber()
        checkLagging()
        checkAppWritesKept()
    }

    /// §6: a subscriber to everything gets every change once, in revision order, with no gap: the history's.
    mutating func checkSubscriber() {
        let history = harness.core.store.history.records.map { record in
            HarnessSubscriber.Change(
                revision: record.clock.revision, scene: record.scene.rawValue, kind: record.kind.rawValue,
                version: record.version)
        }
        if let first = subscriber.unexpected.first { fail("the subscriber read \(first)") }
        let got = subscriber.changes
        var index = 0
        while index < got.count, index < history.count, got[index] == history[index] { index += 1 }
        guard index < max(got.count, history.count) else { return }
        let read = index < got.count ? got[index].description : "nothing more"
        let recorded = index < history.count ? history[index].description : "nothing more"
        fail("the subscriber's change \(index + 1) is \(read), the history's \(recorded)")
    }

    /// §4: every revision handed out once, in order, with no gap: the history (which holds every change of a
    /// schedule) numbers its changes 1, 2, 3, … up to the store's revision, and that mark is durable.
    mutating func checkRevisions() {
        let store = harness.core.store
        let revisions = store.history.records.map(\.clock.revision)
        if revisions != Array((0..<store.revision).map { $0 + 1 }) {
            fail("the history holds revisions \(revisions) for a store at r\(store.revision)")
        }
        checkDurable(store.revision)
    }

    /// §6: every request answered once, in the order sent.
    mutating func checkAnswers() {
        for (index, client) in clients.enumerated() {
            let sent = client.sent.map(\.id)
            let answered = client.answers.map(\.id)
            if sent != answered { fail("client \(index) sent \(sent) and was answered \(answered)") }
        }
    }

    /// §3: once settled, the store's state of each scene is its file's content (no scene, no file).
    mutating func checkFiles() {
        for scene in Self.scenes {
            let state = harness.core.store.scene(scene)
            let file = harness.file(scene)
            switch (state, file) {
            case (nil, nil):
                break
            case (let state?, let file?):
                if state.fileBytes != file {
                    fail("\(scene): the store holds \(text(state.fileBytes)), the file \(text(file))")
                }
            case (let state?, nil):
                fail("\(scene): the store holds \(text(state.fileBytes)), and there is no file")
            case (nil, let file?):
                fail("\(scene): the file holds \(text(file)), and the store has no such scene")
            }
        }
    }

    /// §3: a change acknowledged and never superseded by a later change of its scene is the file's content.
    mutating func checkAcknowledgedInFiles() {
        let timeline = HarnessTimeline(records: harness.core.store.history.records)
        for client in clients {
            for (sent, answer) in zip(client.sent, client.answers) where answer.ok && sent.request.isChange {
                guard let scene = sent.request.scene, let revision = answer.revision,
                    !timeline.records.contains(where: { $0.scene == scene && $0.clock.revision > revision })
                else { continue }
                let state = timeline.state(scene, at: revision)
                let file = harness.file(scene).map { HarnessScene.values(ofFile: $0) }
                if file != state?.values {
                    fail(
                        "request \(sent.id) of \(scene) acknowledged at r\(revision) and never superseded, but the "
                            + "file holds \(file?.description ?? "nothing")")
                }
            }
        }
    }

    /// §6, the per-connection policy: the slow subscriber's queue never held more change events than its bound
    /// (checked at every step), what it read was every change in order with no gap, or a resync, and it ends with the
    /// store's state at the store's revision.
    mutating func checkLagging() {
        if let problem = lagging.problems.first { fail("the slow subscriber: \(problem)") }
        let store = harness.core.store
        if lagging.seen != store.revision {
            fail("the slow subscriber ends at r\(lagging.seen ?? 0), the store at r\(store.revision)")
        }
        for scene in Self.scenes {
            let state = store.scene(scene).map {
                HarnessScene(version: $0.version, values: HarnessScene.values(ofFile: $0.fileBytes))
            }
            if lagging.view[scene.rawValue] != state {
                fail(
                    "the slow subscriber ends with \(scene) as \(lagging.view[scene.rawValue]?.description ?? "none"), "
                        + "the store as \(state?.description ?? "none")")
            }
        }
    }

    /// What holds after every step: each change recorded since the last step has the next revision (none handed out
    /// twice, none skipped), every revision handed out is under a durable mark, and the slow subscriber's queue is
    /// within its bound.
    mutating func checkStep() {
        let records = harness.core.store.history.records
        var last = recordsChecked > 0 ? records[recordsChecked - 1].clock.revision : 0
        for record in records[recordsChecked...] {
            if record.clock.revision != last + 1 { fail("r\(record.clock.revision) recorded after r\(last)") }
            last = record.clock.revision
        }
        recordsChecked = records.count
        checkDurable(harness.core.store.revision)
        if let subscription = lagging.subscription {
            let queued = lagging.outbox.queuedChangeEvents(subscription: subscription)
            if queued > HarnessLaggingSubscriber.queueBound {
                fail(
                    "the slow subscriber's queue holds \(queued) change events, over its bound of "
                        + "\(HarnessLaggingSubscriber.queueBound)")
            }
        }
    }
}
