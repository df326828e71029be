import Testing

@testable import SceneSyncDaemon

/// When a connection is closed at shutdown, decided with the time passed in.
@Suite struct ShutdownClosePolicyTests {
    let policy = ShutdownClosePolicy(stall: .seconds(2), limit: .seconds(10))

    @Test func outputThatStopsMovingClosesAfterTheStall() {
        let outbox = Outbox(limit: 4, counters: DeliveryCounters())
        let began = ContinuousClock.now
        outbox.enqueue(line: Array("the shutdown event".utf8))
        #expect(!policy.closes(outbox, began: began, now: began + .seconds(1)))
        #expect(policy.closes(outbox, began: began, now: began + .seconds(3)))
    }

    @Test func theLimitClosesWhatTheStallDoesNot() {
        let outbox = Outbox(limit: 4, counters: DeliveryCounters())
        let began = ContinuousClock.now
        outbox.enqueue(line: Array("a backlog".utf8))
        // A stall longer than the limit: only the limit can close it.
        let patient = ShutdownClosePolicy(stall: .seconds(60), limit: .seconds(10))
        #expect(!patient.closes(outbox, began: began, now: began + .seconds(9)))
        #expect(patient.closes(outbox, began: began, now: began + .seconds(10)))
    }

    @Test func testHooksAloneOverrideTheTimers() {
        let environment = ["SCENESYNC_TEST_SHUTDOWN_STALL_MS": "100", "SCENESYNC_TEST_SHUTDOWN_LIMIT_MS": "500"]
        #expect(ShutdownClosePolicy.from(environment: environment, testHooks: false) == ShutdownClosePolicy())
        #expect(
            ShutdownClosePolicy.from(environment: environment, testHooks: true)
                == ShutdownClosePolicy(stall: .milliseconds(100), limit: .milliseconds(500)))
    }
}
