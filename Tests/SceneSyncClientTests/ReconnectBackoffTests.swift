import SceneSyncClient
import Testing

@Suite struct ReconnectBackoffTests {
    @Test func growsToTheMaximum() {
        let backoff = ReconnectBackoff(initial: .milliseconds(100), maximum: .seconds(1), multiplier: 2, jitter: 0)
        #expect(backoff.delay(attempt: 0) == .milliseconds(100))
        #expect(backoff.delay(attempt: 1) == .milliseconds(200))
        #expect(backoff.delay(attempt: 3) == .milliseconds(800))
        #expect(backoff.delay(attempt: 4) == .seconds(1))
        #expect(backoff.delay(attempt: 1000) == .seconds(1))
    }

    @Test func jitterStaysInBounds() {
        let backoff = ReconnectBackoff(initial: .seconds(1), maximum: .seconds(1), multiplier: 2, jitter: 0.2)
        for _ in 0..<100 {
            let delay = backoff.delay(attempt: 0)
            #expect(delay >= .milliseconds(799) && delay <= .milliseconds(1201))
        }
    }
}
