import SceneSyncCore

@testable import SceneSyncDaemon

/// Each answer, checked as the client reads it against the engine's history (SPEC §4, §6): what it says happened
/// is what was recorded, at a revision between the request's handover and the answer.
extension HarnessSchedule {
    mutating func check(_ answer: HarnessClient.Answer, _ sent: HarnessClient.Sent) {
        let label = "request \(sent.request.line(id: sent.id))"
        guard let handed = sent.handedOver else { return fail("\(label) answered before it was handed over") }
        let read = harness.core.store.revision
        let timeline = HarnessTimeline(records: harness.core.store.history.records)
        if let revision = answer.revision ?? answer.snapshot?.revision {
            checkDurable(revision)
            if revision < handed.revision || revision > read {
                return fail("\(label) answered \(answer.text), not within r\(handed.revision)-r\(read)")
            }
        }
        switch sent.request {
        case .set, .push, .pop, .delete:
            if answer.ok {
                checkAcknowledged(sent.request, answer, handed, timeline, label)
            } else {
                checkRefused(sent.request, answer, handed, read, timeline, label)
            }
        case .get(let scene):
            guard answer.ok else {
                if answer.errorCode == "not_found", states(sent.request, handed, read, timeline).contains(nil) {
                    return
                }
                return fail("\(label) answered \(answer.text)")
            }
            let state = answer.revision.flatMap { timeline.state(scene, at: $0) }
            if HarnessScene(wire: answer.object) != state {
                fail("\(label) answered \(answer.text), but the scene was \(state?.description ?? "none")")
            }
        case .phase(_, background: false):
            if !answer.ok || answer.snapshot != nil { fail("\(label) answered \(answer.text)") }
        case .sync, .phase, .snapshot:
            checkBarrier(answer, handed, timeline, label)
        }
    }

    /// The states the request's scene had between its handover and now.
    private func states(
        _ request: HarnessRequest, _ handed: HarnessClient.Moment, _ read: UInt64, _ timeline: HarnessTimeline
    ) -> [HarnessScene?] {
        guard let scene = request.scene else { return [] }
        return timeline.states(scene, from: handed.revision, through: read)
    }

    /// §4: an acknowledged change is the change recorded at its revision (its scene, its version, the request's
    /// outcome on a state the scene had since the request was handed over, whose version is its `if_version`), or,
    /// for a `set`, no change (the path was the scene's); and no other change was acknowledged with that revision. A
    /// `delete` of a scene an app removed in its rename's window is `not_found`, never acknowledged.
    /// The app writes made before it was handed over were merged before it (§3: the file events taken ahead of a
    /// change are merged first).
    private mutating func checkAcknowledged(
        _ request: HarnessRequest, _ answer: HarnessClient.Answer, _ handed: HarnessClient.Moment,
        _ timeline: HarnessTimeline, _ label: String
    ) {
        guard let revision = answer.revision, let scene = request.scene else {
            return fail("\(label) acknowledged without a revision: \(answer.text)")
        }
        let record = timeline.last(scene, atOrBefore: revision)
        let isChange = record?.clock.revision == revision && record?.origin.source == .client
        let state = record?.harnessScene
        let outcome: HarnessRequest.Outcome = state.map { .values($0.values) } ?? .deleted
        let candidates = timeline.states(scene, from: handed.revision, through: revision)
        let decidedOn = candidates.first { before in
            request.outcome(after: before) == outcome
                && request.ifVersion.map { asked in
                    asked == before?.version ?? 0
                        || Self.isRebased(before, of: scene, asked: asked, within: handed.revision...revision, timeline)
                } ?? true
        }
        let description = record.map { "v\($0.version) \($0.harnessScene?.values.description ?? "deleted")" } ?? "none"
        let isNoOp = !isChange && { if case .set = request { true } else { false } }()
        if !isChange && !isNoOp || decidedOn == nil || (state != nil && state?.version != answer.version) {
            return fail(
                "\(label) acknowledged as \(answer.text), but at r\(revision) \(scene) was \(description) by "
                    + "\(record.map { "\($0.origin.source) at r\($0.clock.revision)" } ?? "nobody")")
        }
        guard isChange else { return }
        let change = "\(scene) \(description)"
        if let earlier = acknowledged.updateValue(change, forKey: revision), earlier != change {
            fail("r\(revision) acknowledged for two changes: \(earlier) and \(change)")
        }
        let before = max(lostBefore, 0)..<max(lostBefore, handed.appWrites)
        if let missed = unmerged(before, at: revision - 1, timeline) {
            fail("\(label) was decided at r\(revision) before \(missed)")
        }
    }

    /// Whether `state` is a change of the request's group that a rebase numbered one above the version the request
    /// was checked against: an app's write that a rename of the group displaced was merged ahead of the group's
    /// changes to the scene, each of which then took the next version, the first with the app's write as its
    /// conflict (docs/guarantees.md, "the write path"). A later change of the group was checked, as planned, against
    /// that change's planned version.
    static func isRebased(
        _ state: HarnessScene?, of scene: SceneID, asked: UInt64, within window: ClosedRange<UInt64>,
        _ timeline: HarnessTimeline
    ) -> Bool {
        guard let state, state.version == asked + 1 else { return false }
        // Within the request's window: a version recurs once its scene is deleted and made again.
        let record = timeline.records.last {
            $0.scene == scene && $0.version == state.version && window.contains($0.clock.revision)
        }
        return record?.origin.source == .client && record?.conflict?.origin.source == .file
    }

    /// A refused change names why, and the reason held at some moment between its handover and its answer.
    private mutating func checkRefused(
        _ request: HarnessRequest, _ answer: HarnessClient.Answer, _ handed: HarnessClient.Moment, _ read: UInt64,
        _ timeline: HarnessTimeline, _ label: String
    ) {
        let states = states(request, handed, read, timeline)
        let holds: Bool
        switch answer.errorCode {
        case "conflict":
            // §4: a version not the one asked for, and `error.current` the scene as it was at some moment
            // meanwhile (its version and its path; none when it did not exist). A refusal decided after an earlier
            // change of its group to the same scene names that change once committed: renumbered when a rebase put
            // an app's write ahead of it, and never when that change's write failed (then it is `unavailable`).
            let current = HarnessScene(wire: answer.error?["current"])
            holds =
                request.ifVersion.map { asked in asked != (current?.version ?? 0) && states.contains(current) }
                ?? false
        case "not_found":
            // A version named is checked first: a missing scene is then a `conflict`, unless it asked for none.
            holds =
                request.outcome(after: nil) == .refused && states.contains(nil)
                && (request.ifVersion.map { $0 == 0 } ?? true)
        case "out_of_range":
            holds = states.contains { request.outcome(after: $0) == .refused }
        case "unavailable":
            // After a failed write; or, for an `if_version` refused on its group's planned change and matching the
            // version that change took once an app's write was put ahead of it, as the scene changed while it was
            // decided (a version the request could only have guessed).
            failedWrites += harness.faults.takeFired()
            let failedSince = failedWrites.dropFirst(handed.failedWrites)
            let failed = request.scene.map(failedSince.contains) ?? false
            // The change before it: a client's, at the version asked for, recorded since the handover.
            let changedWhileDecided = request.ifVersion.map { asked in
                timeline.records.contains {
                    $0.scene == request.scene && $0.version == asked && $0.origin.source == .client
                        && $0.clock.revision > handed.revision && $0.clock.revision <= read
                }
            }
            holds = failed || changedWhileDecided == true
        default:
            holds = false
        }
        if !holds { fail("\(label) refused as \(answer.text), while the scene was \(states)") }
    }
}
