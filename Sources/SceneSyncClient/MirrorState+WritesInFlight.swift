import SceneSyncCore

extension MirrorState {
    /// This mirror's writes not answered yet, and the changes that arrived meanwhile: such a change may be one of
    /// those writes, which only its answer tells, so it waits until every write is answered.
    struct WritesInFlight {
        var count = 0
        /// Already decoded. Bounded by what the daemon sends during one round trip; past ``maxHeld`` changes are
        /// taken in at once (and may then be reported though they were this mirror's own).
        var held: [(ChangeRecord, DecodedRoutes<Route>)] = []

        static var maxHeld: Int { 1024 }

        /// Keeps a change back while a write is in flight and there is room; `false` when it must be taken in now.
        mutating func hold(_ record: ChangeRecord, decoded: DecodedRoutes<Route>) -> Bool {
            guard count > 0, held.count < Self.maxHeld else { return false }
            held.append((record, decoded))
            return true
        }

        /// A `synced` clock that came while changes were held: the view is complete there once they are taken in.
        var synced: Clock? = nil

        /// The held changes, once no write is in flight any more: the answers have told which were this mirror's.
        mutating func release() -> [(ChangeRecord, DecodedRoutes<Route>)] {
            guard count == 0 else { return [] }
            defer { held = [] }
            return held
        }

        /// The `synced` clock kept by ``stopShort(of:confirmed:)``, once the held changes are released.
        mutating func releaseSynced() -> Clock? {
            guard count == 0 else { return nil }
            defer { synced = nil }
            return synced
        }

        /// The clock the mirror is complete at after a `synced` at `clock`, given its `confirmed` one.
        ///
        /// A change held back is not in the mirror yet. Were its clock counted as seen, an answer that tells the
        /// scene as that change left it (``MirrorState/adopt(_:decoded:)``) would take it for old news, and this
        /// mirror's commit on top of it would cover it when it is released: the other writer's change would never be
        /// reported, and, if the write failed, never shown. So the clock stops short of the first held change, and
        /// reaches `clock` when the held changes are released.
        mutating func stopShort(of clock: Clock, confirmed: Clock?) -> Clock {
            let complete = confirmed?.movedOn(to: clock) ?? clock
            let heldRevisions = held.lazy.filter { $0.0.clock.epoch == complete.epoch }.map(\.0.clock.revision)
            guard let first = heldRevisions.min(), first <= complete.revision else { return complete }
            synced = complete
            let stop = Clock(epoch: complete.epoch, revision: first > 0 ? first - 1 : 0)
            return confirmed?.movedOn(to: stop) ?? stop
        }
    }
}
