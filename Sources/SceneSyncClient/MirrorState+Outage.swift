extension MirrorState {
    /// The daemon's connection is lost: if it stays lost past the session's deadline, the app hears of it once on
    /// ``ScenePath/failures``. A generation number tells a timer that fires late from the outage it was set for.
    struct Outage {
        var generation: UInt64 = 0
        var down = false

        /// The connection dropped; returns the generation the timer waits for.
        mutating func begin() -> UInt64 {
            generation += 1
            down = true
            return generation
        }

        /// The connection is back: a timer still running finds another generation and says nothing.
        mutating func end() {
            generation += 1
            down = false
        }
    }

    /// The timer of an outage fired: a failure to report while that outage still lasts.
    mutating func outageOutlasted(_ generation: UInt64, failure: SceneSyncClientError) -> Outcome {
        guard outage.down, outage.generation == generation, !finished else { return Outcome() }
        var outcome = Outcome()
        outcome.emissions = [.failure(failure)]
        outcome.listeners = listeners.all
        return outcome
    }
}
