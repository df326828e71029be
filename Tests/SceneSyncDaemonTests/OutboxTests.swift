import Testing

@testable import SceneSyncDaemon

#if canImport(Glibc)
import Glibc
#endif

/// The per-connection queue's bounds: what a slow subscriber loses, and what it never loses.
@Suite struct OutboxTests {
    func names(_ items: some Sequence<Outbox.Item>) -> [String] { ConnectionOutput.Item.names(items) }

    @Test func overflowDropsOnlyThatSubscriptionsEventsAndQueuesOneMarker() async throws {
        let outbox = Outbox(limit: 2, counters: DeliveryCounters())
        outbox.enqueue(subscription: 1, event: "change", body: [])
        outbox.enqueue(subscription: 2, event: "change", body: [])
        outbox.enqueue(line: Array("response".utf8))
        outbox.enqueue(subscription: 1, event: "change", body: [])
        outbox.enqueue(subscription: 1, event: "change", body: [])  // third: over the limit
        outbox.enqueue(subscription: 1, event: "change", body: [])  // lagging: dropped on arrival
        outbox.enqueue(subscription: 2, event: "change", body: [])
        #expect(outbox.isLagging)
        let items = try #require(await outbox.next())
        #expect(names(items) == ["2:change", "line:response", "1:LAGGED", "2:change"])
        #expect(outbox.counters.eventsDropped == 4)
    }

    @Test func catchUpBurstsDoNotCountAgainstTheLimit() async throws {
        let outbox = Outbox(limit: 2, counters: DeliveryCounters())
        for _ in 0..<10 { outbox.enqueue(subscription: 1, event: "state", body: [], counted: false) }
        outbox.enqueue(subscription: 1, event: "synced", body: [], counted: false)
        outbox.enqueue(subscription: 1, event: "change", body: [])
        outbox.enqueue(subscription: 1, event: "change", body: [])
        #expect(!outbox.isLagging)
        let items = try #require(await outbox.next())
        #expect(items.count == 13)
    }

    @Test func takingItemsFreesRoomAndClearingTheLagQueuesAgain() async throws {
        let outbox = Outbox(limit: 1, counters: DeliveryCounters())
        outbox.enqueue(subscription: 1, event: "change", body: [])
        _ = await outbox.next()
        outbox.enqueue(subscription: 1, event: "change", body: [])  // room again after the writer took one
        #expect(!outbox.isLagging)
        outbox.enqueue(subscription: 1, event: "change", body: [])
        #expect(outbox.isLagging)
        outbox.clearLag(subscription: 1)
        outbox.enqueue(subscription: 1, event: "resync", body: [], counted: false)
        let items = try #require(await outbox.next())
        #expect(names(items) == ["1:LAGGED", "1:resync"])
    }

    @Test func closeDrainsThenEnds() async throws {
        let outbox = Outbox(limit: 4, counters: DeliveryCounters())
        outbox.enqueue(line: Array("a".utf8))
        outbox.close()
        outbox.enqueue(line: Array("ignored".utf8))
        #expect(names(try #require(await outbox.next())) == ["line:a"])
        #expect(await outbox.next() == nil)
    }

    @Test func aWaitingWriterWakesForNewItems() async throws {
        let outbox = Outbox(limit: 4, counters: DeliveryCounters())
        async let batch = outbox.next()
        outbox.enqueue(line: Array("late".utf8))
        #expect(names(try #require(await batch)) == ["line:late"])
    }

    @Test func responsesCountAgainstThePendingBoundAndWritingFreesRoom() async throws {
        let outbox = Outbox(limit: 4, counters: DeliveryCounters(), maxPendingBytes: 100)
        #expect(outbox.hasRoom)
        outbox.enqueue(line: Array(repeating: UInt8(ascii: "x"), count: 60))
        #expect(outbox.hasRoom)
        outbox.enqueue(line: Array(repeating: UInt8(ascii: "y"), count: 60))
        #expect(!outbox.hasRoom)
        // Change events are bounded by their number, not their bytes.
        outbox.enqueue(subscription: 1, event: "change", body: Array(repeating: 0x20, count: 1000))
        #expect(outbox.pendingBytes == 120)
        let waiting = Task { await outbox.waitForRoom() }
        _ = try #require(await outbox.next())
        // Taken, but not yet written: still pending.
        #expect(!outbox.hasRoom)
        outbox.wrote()
        #expect(outbox.hasRoom)
        #expect(outbox.pendingBytes == 0)
        await waiting.value
    }

    @Test func outputThatDoesNotMoveIsStalledAndAnIdleConnectionIsNot() async throws {
        let outbox = Outbox(limit: 4, counters: DeliveryCounters())
        let later = ContinuousClock.now + .seconds(120)
        #expect(!outbox.isStalled(timeout: .seconds(60), now: later))
        outbox.enqueue(line: Array("answer".utf8))
        #expect(!outbox.isStalled(timeout: .seconds(60), now: .now))
        #expect(outbox.isStalled(timeout: .seconds(60), now: later))
        _ = try #require(await outbox.next())
        // The writer holds it: still pending until written.
        #expect(outbox.isStalled(timeout: .seconds(60), now: later))
        outbox.wrote()
        #expect(!outbox.isStalled(timeout: .seconds(60), now: later))
    }

    @Test func closeReleasesAReaderWaitingForRoom() async throws {
        let outbox = Outbox(limit: 4, counters: DeliveryCounters(), maxPendingBytes: 10)
        outbox.enqueue(line: Array(repeating: UInt8(ascii: "x"), count: 20))
        let waiting = Task { await outbox.waitForRoom() }
        outbox.close()
        await waiting.value
        #expect(outbox.isClosed)
    }

    /// Each outbox has one writer and one reader. A second waiter in either slot stops the process; before, it
    /// replaced the first, whose task then waited forever. (Without the check, the child below exits cleanly after
    /// a few seconds instead of failing, so the test fails.)
    @Test func aSecondWriterWaitingIsAProgrammingErrorNotALeak() async {
        await #expect(processExitsWith: .failure) {
            let outbox = Outbox(limit: 2, counters: DeliveryCounters())
            let first = Task { await outbox.next() }
            while !outbox.writerIsWaiting { await Task.yield() }
            Task {
                try await Task.sleep(for: .seconds(5))
                exit(0)
            }
            _ = await outbox.next()
            first.cancel()
        }
    }

    @Test func aSecondReaderWaitingForRoomIsAProgrammingErrorNotALeak() async {
        await #expect(processExitsWith: .failure) {
            let outbox = Outbox(limit: 2, counters: DeliveryCounters(), maxPendingBytes: 1)
            outbox.enqueue(line: Array("a response over the bound".utf8))
            let first = Task { await outbox.waitForRoom() }
            while !outbox.readerIsWaiting { await Task.yield() }
            Task {
                try await Task.sleep(for: .seconds(5))
                exit(0)
            }
            await outbox.waitForRoom()
            first.cancel()
        }
    }
}
