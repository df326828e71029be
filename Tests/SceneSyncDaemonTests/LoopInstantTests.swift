import Testing

@testable import SceneSyncDaemon

/// The connections' own instants keep `ContinuousClock`'s time, to the nanosecond.
@Suite struct LoopInstantTests {
    @Test func itKeepsTheClocksInstantAndItsDistances() {
        let instant = ContinuousClock.now + .milliseconds(1500)
        let converted = LoopInstant(instant)
        #expect(converted.instant == instant)
        #expect(LoopInstant(instant + .nanoseconds(7)) - converted == .nanoseconds(7))
        #expect(converted + .seconds(2) == LoopInstant(instant + .seconds(2)))
        var moved = converted
        moved += .microseconds(3)
        #expect(moved > converted)
        #expect(moved - converted == .microseconds(3))
        #expect(LoopInstant(ContinuousClock.now - .seconds(5)) < .now)
    }
}
