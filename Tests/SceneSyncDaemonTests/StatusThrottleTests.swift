import Testing

@testable import SceneSyncDaemon

/// When systemd's status line goes out, with the time passed in: never more than once per interval, never more
/// than one interval behind, and an unchanged line not at all.
@Suite struct StatusThrottleTests {
    let start = ContinuousClock.now
    let interval = Duration.milliseconds(100)

    @Test func theFirstChangeGoesOutAtOnceAndTheNextOnesAsOneTrailingUpdate() {
        var throttle = StatusThrottle(interval: interval)
        let first = throttle.changed(now: start)
        #expect(first == .send)
        let firstSent = throttle.send("a", now: start)
        #expect(firstSent)
        let second = throttle.changed(now: start + .milliseconds(10))
        #expect(second == .flush(at: start + interval))
        let third = throttle.changed(now: start + .milliseconds(20))
        #expect(third == .none, "one trailing update, not one per change")
        throttle.flushed()
        let trailingSent = throttle.send("b", now: start + interval)
        #expect(trailingSent)
        let fourth = throttle.changed(now: start + interval + .milliseconds(1))
        #expect(fourth == .flush(at: start + interval * 2), "the interval counts from the trailing update")
    }

    @Test func aChangeAfterAQuietIntervalGoesOutAtOnce() {
        var throttle = StatusThrottle(interval: interval)
        _ = throttle.send("a", now: start)
        let later = throttle.changed(now: start + interval)
        #expect(later == .send)
    }

    @Test func forceSendsAtOnceEvenWhileAnUpdateIsScheduled() {
        var throttle = StatusThrottle(interval: interval)
        _ = throttle.send("a", now: start)
        let scheduled = throttle.changed(now: start + .milliseconds(1))
        #expect(scheduled == .flush(at: start + interval))
        let forced = throttle.changed(now: start + .milliseconds(2), force: true)
        #expect(forced == .send)
    }

    @Test func anUnchangedLineIsNotSentAgain() {
        var throttle = StatusThrottle(interval: interval)
        let first = throttle.send("a", now: start)
        let same = throttle.send("a", now: start + interval)
        let changed = throttle.send("b", now: start + interval * 2)
        #expect(first && !same && changed)
    }
}
