import SceneSyncCore

/// The revision high-water mark (SPEC §4), written on the blocking executor as ``RevisionReservation`` decides.
///
/// Every step that hands out revisions (a batch of file events, a group commit, a remote batch, a rescan, the
/// start-up merge) first calls ``reserveRevisions(_:then:)`` for as many as it may need, then hands them out in its
/// completion, without waiting again: steps run one at a time (``PipelineMachine``), so nothing else takes them in
/// between.
extension EngineCore {
    /// Makes sure the next `count` revisions are durably reserved, then calls `done`: at once when the block
    /// reserved ahead covers them, otherwise once the mark is written. `done` gets `unavailable` when the state
    /// directory cannot record the mark.
    func reserveRevisions(_ count: Int, then done: @escaping (SceneSyncError?) -> Void) {
        switch revisions.prepare(count, after: store.revision) {
        case .ready(let ahead):
            if let ahead { startReservation(ahead) }
            done(nil)
        case .mustWait(let start):
            if let start { startReservation(start) }
            let waiting = revisions.wait { [self] failure in
                // A write that another step started (perhaps before the disk had room again) failing is no answer
                // for this one: it tries again with a write of its own, and only that one's failure is final.
                if let failure, start != nil {
                    done(Self.reservationError(failure))
                } else {
                    reserveRevisions(count, then: done)
                }
            }
            // A write is under way: this one, or the one `prepare` found, whose completion has not run yet.
            precondition(waiting, "revisions were to be waited for while no reservation was being written")
        }
    }

    /// Whether `count` revisions are reserved already, so that a step may hand them out in this turn: the block
    /// reserved ahead covers them. Starts writing the next block when this one is half used.
    func reserveAhead(_ count: Int) -> Bool {
        guard revisions.covers(count, after: store.revision) else { return false }
        if case .ready(let ahead?) = revisions.prepare(count, after: store.revision) { startReservation(ahead) }
        return true
    }

    /// Whether one more revision may be handed out now: the step's ``reserveRevisions(_:then:)`` covered it. When
    /// it did not (the state directory cannot be written), the error says why.
    func nextRevisionReserved() -> SceneSyncError? {
        guard !revisions.covers(1, after: store.revision) else { return nil }
        return Self.reservationError(revisions.lastFailure ?? "no revision block is reserved")
    }

    private func startReservation(_ mark: UInt64) {
        let stateDirectory = stateDirectory
        offload { () -> String? in
            do throws(SystemError) {
                try stateDirectory.reserve(upTo: mark)
                return nil
            } catch {
                return "\(error)"
            }
        } reporting: {
            .revisionsReserved(mark: mark, failure: $0)
        }
    }

    /// The write of `mark` is done (``EngineInput/revisionsReserved(mark:failure:)``).
    func reservationFinished(_ mark: UInt64, failure: String?) {
        if let failure {
            logger.error("cannot reserve revisions", metadata: ["mark": "\(mark)", "error": "\(failure)"])
        }
        for waiter in revisions.finished(mark, failure: failure) { waiter(failure) }
    }

    private static func reservationError(_ failure: String) -> SceneSyncError {
        SceneSyncError(.unavailable, "cannot record the revision high-water mark: \(failure)")
    }
}

extension EngineCore {
    /// Reserves revisions for up to `count` file merges, then calls `done`. A failure is not reported: each merge
    /// that finds no revision reserved defers itself and says why (see ``mergeFile(_:content:evenWhileDraining:)``),
    /// and is retried.
    func reserveForMerges(_ count: Int, then done: @escaping () -> Void) {
        // Reported by the merges themselves, once per scene.
        reserveRevisions(count) { _ in done() }
    }
}
