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

        /// The held changes, once no write is in flight any more: the answers have told which were this mirror's.
        mutating func release() -> [(ChangeRecord, DecodedRoutes<Route>)] {
            guard count == 0 else { return [] }
            defer { held = [] }
            return held
        }
    }
}
