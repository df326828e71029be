extension MirrorState {
    /// The listeners under the ids that end them: a stream or callback cancelled on its own removes just itself.
    struct Listeners {
        var byID: [UInt64: MirrorListener<Route>] = [:]
        var nextID: UInt64 = 0

        /// Every listener, to hand an outcome to outside the lock.
        var all: [MirrorListener<Route>] { Array(byID.values) }

        mutating func add(_ listener: MirrorListener<Route>) -> UInt64 {
            defer { nextID += 1 }
            byID[nextID] = listener
            return nextID
        }

        /// Returns the listener, so that it is released outside the lock: a stream's termination handler takes it.
        mutating func remove(_ id: UInt64) -> MirrorListener<Route>? {
            byID.removeValue(forKey: id)
        }

        /// Every listener, none left behind: the mirror stopped.
        mutating func removeAll() -> [MirrorListener<Route>] {
            defer { byID = [:] }
            return all
        }
    }
}
