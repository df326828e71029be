import SceneSyncCore

/// The revision high-water mark (SPEC §4), written on the blocking executor as ``RevisionReservation`` decides.
///
/// Every step that hands out revisions (a batch of file events, a group commit, a remote batch, a rescan, the
/// start-up merge) first awaits ``reserveRevisions(_:)`` for as many as it may need, then hands them out without
/// suspending: steps run one at a time (``PipelineMachine``), so nothing else takes them in between.
extension SceneEngine {
    /// Makes sure the next `count` revisions are durably reserved, waiting only when the block reserved ahead does
    /// not cover them. Throws `unavailable` when the state directory cannot record the mark.
    func reserveRevisions(_ count: Int) async throws(SceneSyncError) {
        while true {
            switch revisions.prepare(count, after: store.revision) {
            case .ready(let ahead):
                if let ahead { startReservation(ahead) }
                return
            case .mustWait(let start):
                if let start { startReservation(start) }
                let reserved = loop.eventLoop.makePromise(of: String?.self)
                // Not always under way still: a write that finished since `prepare` has its outcome known already.
                if !revisions.wait(reserved) { reserved.succeed(revisions.lastFailure) }
                let failure = await reserved.futureResult.outcome()
                // A write that another step started (perhaps before the disk had room again) failing is no answer
                // for this one: it tries again with a write of its own, and only that one's failure is final.
                if let failure, start != nil { throw Self.reservationError(failure) }
            }
        }
    }

    /// Whether `count` revisions are reserved already, so that a step may hand them out in this turn: the block
    /// reserved ahead covers them. Starts writing the next block when this one is half used.
    func reserveAhead(_ count: Int) -> Bool {
        guard revisions.covers(count, after: store.revision) else { return false }
        if case .ready(let ahead?) = revisions.prepare(count, after: store.revision) { startReservation(ahead) }
        return true
    }

    /// Whether one more revision may be handed out now: the step's ``reserveRevisions(_:)`` covered it. When it
    /// did not (the state directory cannot be written), the error says why.
    func nextRevisionReserved() -> SceneSyncError? {
        guard !revisions.covers(1, after: store.revision) else { return nil }
        return Self.reservationError(revisions.lastFailure ?? "no revision block is reserved")
    }

    private func startReservation(_ mark: UInt64) {
        let stateDirectory = stateDirectory
        tasks.spawn {
            let failure = await self.io.run { () -> String? in
                do throws(SystemError) {
                    try stateDirectory.reserve(upTo: mark)
                    return nil
                } catch {
                    return "\(error)"
                }
            }
            await self.reservationFinished(mark, failure: failure)
        }
    }

    private func reservationFinished(_ mark: UInt64, failure: String?) {
        if let failure {
            logger.error("cannot reserve revisions", metadata: ["mark": "\(mark)", "error": "\(failure)"])
        }
        for waiter in revisions.finished(mark, failure: failure) { waiter.succeed(failure) }
    }

    private static func reservationError(_ failure: String) -> SceneSyncError {
        SceneSyncError(.unavailable, "cannot record the revision high-water mark: \(failure)")
    }
}

extension SceneEngine {
    /// Reserves revisions for up to `count` file merges. A failure is not thrown: each merge that finds no revision
    /// reserved defers itself and says why (see ``mergeFile(_:content:evenWhileDraining:)``), and is retried.
    func reserveForMerges(_ count: Int) async {
        do throws(SceneSyncError) {
            try await reserveRevisions(count)
        } catch {
            // Reported by the merges themselves, once per scene.
        }
    }
}
