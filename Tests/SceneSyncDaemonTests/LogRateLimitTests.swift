import Testing

@testable import SceneSyncDaemon

/// Lines a client can cause: a burst per interval, the rest counted and told with the next line logged.
@Suite struct LogRateLimitTests {
    let start = ContinuousClock.now

    @Test func aBurstIsLoggedThenLinesAreCountedUntilTheNextInterval() {
        var limit = LogRateLimit(burst: 3, interval: .seconds(30))
        let first = (0..<3).map { limit.admit(at: start + .seconds($0)) }
        #expect(first == Array(repeating: .log(suppressedBefore: 0), count: 3))
        let flood = (0..<1000).map { _ in limit.admit(at: start + .seconds(10)) }
        #expect(flood.allSatisfy { $0 == .suppress } && limit.suppressed == 1000)
        // The next interval opens with a line that tells what was left out, then counts afresh.
        #expect(limit.admit(at: start + .seconds(31)) == .log(suppressedBefore: 1000))
        #expect(limit.admit(at: start + .seconds(32)) == .log(suppressedBefore: 0))
        #expect(limit.suppressed == 0)
    }

    @Test func quietClientsAreNeverLimited() {
        var limit = LogRateLimit(burst: 2, interval: .seconds(30))
        for minute in 0..<100 {
            #expect(limit.admit(at: start + .seconds(60 * minute)) == .log(suppressedBefore: 0))
        }
    }
}
