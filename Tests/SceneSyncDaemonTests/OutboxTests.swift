import NIOCore
import Testing

@testable import SceneSyncDaemon

/// The per-connection queue's bounds: what a slow subscriber loses, and what it never loses; and when the outbox
/// calls its connection's writer and reader back.
@Suite struct OutboxTests {
    func names(_ items: some Sequence<Outbox.Item>) -> [String] { ConnectionOutput.Item.names(items) }

    /// Counts the calls of the two hooks a connection's handler plugs in.
    final class Hooks {
        var writerWakes = 0
        var readerReleases = 0

        func attach(to outbox: Outbox) {
            outbox.attach(wakeWriter: { self.writerWakes += 1 }, releaseReader: { self.readerReleases += 1 })
        }
    }

    func taken(_ outbox: Outbox) throws -> CircularBuffer<Outbox.Item> {
        guard case .batch(let items) = outbox.take() else {
            Issue.record("nothing to take")
            return CircularBuffer()
        }
        return items
    }

    @Test func overflowDropsOnlyThatSubscriptionsEventsAndQueuesOneMarker() throws {
        let outbox = Outbox(limit: 2, counters: DeliveryCounters())
        outbox.enqueue(subscription: 1, event: .change, body: [])
        outbox.enqueue(subscription: 2, event: .change, body: [])
        outbox.enqueue(line: Array("response".utf8))
        outbox.enqueue(subscription: 1, event: .change, body: [])
        outbox.enqueue(subscription: 1, event: .change, body: [])  // third: over the limit
        outbox.enqueue(subscription: 1, event: .change, body: [])  // lagging: dropped on arrival
        outbox.enqueue(subscription: 2, event: .change, body: [])
        #expect(outbox.isLagging)
        #expect(names(try taken(outbox)) == ["2:change", "line:response", "1:LAGGED", "2:change"])
        #expect(outbox.counters.eventsDropped == 4)
    }

    @Test func catchUpBurstsDoNotCountAgainstTheLimit() throws {
        let outbox = Outbox(limit: 2, counters: DeliveryCounters())
        for _ in 0..<10 { outbox.enqueue(subscription: 1, event: .state, body: [], counted: false) }
        outbox.enqueue(subscription: 1, event: .synced, body: [], counted: false)
        outbox.enqueue(subscription: 1, event: .change, body: [])
        outbox.enqueue(subscription: 1, event: .change, body: [])
        #expect(!outbox.isLagging)
        #expect(try taken(outbox).count == 13)
    }

    @Test func takingItemsFreesRoomAndClearingTheLagQueuesAgain() throws {
        let outbox = Outbox(limit: 1, counters: DeliveryCounters())
        outbox.enqueue(subscription: 1, event: .change, body: [])
        _ = try taken(outbox)
        outbox.enqueue(subscription: 1, event: .change, body: [])  // room again after the writer took one
        #expect(!outbox.isLagging)
        outbox.enqueue(subscription: 1, event: .change, body: [])
        #expect(outbox.isLagging)
        outbox.clearLag(subscription: 1)
        outbox.enqueue(subscription: 1, event: .resync, body: [], counted: false)
        #expect(names(try taken(outbox)) == ["1:LAGGED", "1:resync"])
    }

    @Test func closeDrainsThenEnds() throws {
        let outbox = Outbox(limit: 4, counters: DeliveryCounters())
        outbox.enqueue(line: Array("a".utf8))
        outbox.close()
        outbox.enqueue(line: Array("ignored".utf8))
        #expect(names(try taken(outbox)) == ["line:a"])
        guard case .finished = outbox.take() else {
            Issue.record("a closed, drained outbox must say finished")
            return
        }
    }

    /// The writer is called back once when it waits and an item comes, not for every item of the burst.
    @Test func aWaitingWriterIsWokenOnceForABurst() throws {
        let outbox = Outbox(limit: 4, counters: DeliveryCounters())
        let hooks = Hooks()
        hooks.attach(to: outbox)
        outbox.enqueue(line: Array("before the writer waits".utf8))
        #expect(hooks.writerWakes == 0)
        #expect(!outbox.writerWaits())  // something is queued: take it first
        _ = try taken(outbox)
        #expect(outbox.writerWaits())
        outbox.enqueue(line: Array("late".utf8))
        outbox.enqueue(line: Array("later".utf8))
        #expect(hooks.writerWakes == 1)
        #expect(names(try taken(outbox)) == ["line:late", "line:later"])
    }

    @Test func closeWakesAWaitingWriter() {
        let outbox = Outbox(limit: 4, counters: DeliveryCounters())
        let hooks = Hooks()
        hooks.attach(to: outbox)
        #expect(outbox.writerWaits())
        outbox.close()
        #expect(hooks.writerWakes == 1)
    }

    @Test func responsesCountAgainstThePendingBoundAndWritingFreesRoom() throws {
        let outbox = Outbox(limit: 4, counters: DeliveryCounters(), maxPendingBytes: 100)
        let hooks = Hooks()
        hooks.attach(to: outbox)
        #expect(outbox.hasRoom)
        outbox.enqueue(line: Array(repeating: UInt8(ascii: "x"), count: 60))
        #expect(outbox.hasRoom)
        outbox.enqueue(line: Array(repeating: UInt8(ascii: "y"), count: 60))
        #expect(!outbox.hasRoom)
        // Change events are bounded by their number, not their bytes.
        outbox.enqueue(subscription: 1, event: .change, body: Array(repeating: 0x20, count: 1000))
        #expect(outbox.pendingBytes == 120)
        #expect(outbox.readerWaits())
        _ = try taken(outbox)
        // Taken, but not yet written: still pending.
        #expect(!outbox.hasRoom)
        #expect(hooks.readerReleases == 0)
        outbox.wrote()
        #expect(outbox.hasRoom)
        #expect(outbox.pendingBytes == 0)
        #expect(hooks.readerReleases == 1)
    }

    @Test func outputThatDoesNotMoveIsStalledAndAnIdleConnectionIsNot() throws {
        let outbox = Outbox(limit: 4, counters: DeliveryCounters())
        let later = ContinuousClock.now + .seconds(120)
        #expect(!outbox.isStalled(timeout: .seconds(60), now: later))
        outbox.enqueue(line: Array("answer".utf8))
        #expect(!outbox.isStalled(timeout: .seconds(60), now: .now))
        #expect(outbox.isStalled(timeout: .seconds(60), now: later))
        _ = try taken(outbox)
        // The writer holds it: still pending until written.
        #expect(outbox.isStalled(timeout: .seconds(60), now: later))
        outbox.wrote()
        #expect(!outbox.isStalled(timeout: .seconds(60), now: later))
    }

    @Test func closeReleasesAReaderWaitingForRoom() {
        let outbox = Outbox(limit: 4, counters: DeliveryCounters(), maxPendingBytes: 10)
        let hooks = Hooks()
        hooks.attach(to: outbox)
        outbox.enqueue(line: Array(repeating: UInt8(ascii: "x"), count: 20))
        #expect(outbox.readerWaits())
        outbox.close()
        #expect(hooks.readerReleases == 1)
        #expect(outbox.isClosed)
        #expect(!outbox.readerWaits())
    }

    /// Each outbox has one writer and one reader: a second wait in either slot stops the process rather than lose
    /// the first one's wake-up.
    @Test func aSecondWriterWaitingIsAProgrammingErrorNotALeak() async {
        await #expect(processExitsWith: .failure) {
            let outbox = Outbox(limit: 2, counters: DeliveryCounters())
            _ = outbox.writerWaits()
            _ = outbox.writerWaits()
        }
    }

    @Test func aSecondReaderWaitingForRoomIsAProgrammingErrorNotALeak() async {
        await #expect(processExitsWith: .failure) {
            let outbox = Outbox(limit: 2, counters: DeliveryCounters(), maxPendingBytes: 1)
            outbox.enqueue(line: Array("a response over the bound".utf8))
            _ = outbox.readerWaits()
            _ = outbox.readerWaits()
        }
    }
}
