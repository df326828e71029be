import SceneSyncCore

@testable import SceneSyncDaemon

/// The rules of SPEC §3-§4 that a settled schedule must keep, checked on the engine's store, the files on disk, the
/// durable revision mark and the answers the clients read.
extension HarnessSchedule {
    /// §4: a revision is handed out only once a mark at or above it is durable (checked at each answer).
    mutating func checkDurable(_ revision: UInt64) {
        let mark = (try? harness.stateDirectory.highWaterMark()) ?? nil
        if (mark ?? 0) < revision {
            fail("r\(revision) acknowledged with only r\(mark ?? 0) durably reserved")
        }
    }

    /// Everything checked once the schedule settled.
    mutating func checkSettled() {
        checkRevisions()
        checkAnswers()
        checkFiles()
        checkAcknowledged()
        checkSubscriber()
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

    /// §4: every acknowledged `set` either made the change recorded at the answer's revision (the client's path,
    /// on its scene, at the answer's version, one change per revision) or changed nothing (its path was the
    /// scene's, §4), the answer then naming the scene's version at that revision. And the path it set is the
    /// file's content, or was superseded by a later change of the scene.
    mutating func checkAcknowledged() {
        let records = harness.core.store.history.records
        var acknowledged: [UInt64: String] = [:]
        for client in clients {
            for (sent, answer) in zip(client.sent, client.answers) where answer.ok {
                let (scene, id) = (sent.scene, sent.id)
                guard let revision = answer.revision,
                    let record = records.last(where: { $0.scene == scene && $0.clock.revision <= revision })
                else {
                    fail("set \(id) of \(scene) acknowledged as \(answer.text), with no change of it recorded")
                    continue
                }
                let recorded = record.path.map { SceneFileCodec.encode($0, as: record.format) }
                if record.kind != .set || record.version != answer.version || recorded != sent.fileBytes {
                    fail(
                        "set \(id) of \(scene) acknowledged as \(answer.text), but at r\(revision) the scene was "
                            + "v\(record.version) \(recorded.map(text) ?? "deleted") by \(record.origin.source)")
                    continue
                }
                let change = "\(scene) v\(record.version)"
                if record.clock.revision == revision,
                    let earlier = acknowledged.updateValue(change, forKey: revision), earlier != change
                {
                    fail("r\(revision) acknowledged for two changes: \(earlier) and \(change)")
                }
                let superseded = records.contains { $0.scene == scene && $0.clock.revision > revision }
                if !superseded, harness.file(scene) != sent.fileBytes {
                    fail(
                        "set \(id) of \(scene) acknowledged at r\(revision) and never superseded, but the file "
                            + "holds \(harness.file(scene).map(text) ?? "nothing")")
                }
            }
        }
    }

    /// The engine's history, one change a line, for the trace of a replay.
    func historyLines() -> [String] {
        harness.core.store.history.records.map { record in
            let path = record.path.map { text(SceneFileCodec.encode($0, as: record.format)) } ?? "deleted"
            let conflict = record.conflict.map { " conflict with \($0.origin.source)" } ?? ""
            return "r\(record.clock.revision) \(record.scene) v\(record.version) \(path) "
                + "by \(record.origin.source)\(conflict)"
        }
    }

    private func text(_ bytes: [UInt8]) -> String {
        String(decoding: bytes, as: UTF8.self)
    }
}
