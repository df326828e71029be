import NIOCore
import Testing

@testable import SceneSyncDaemon

/// Each bound of §6 on ``ConnectionOutput`` alone, with the time passed in.
@Suite struct ConnectionOutputTests {
    let start = LoopInstant.now

    func output(queue: Int = 4, pending: Int = 1_000) -> ConnectionOutput {
        ConnectionOutput(bounds: .init(subscriberQueue: queue, maxPendingBytes: pending), now: start)
    }

    func names(_ items: some Sequence<ConnectionOutput.Item>) -> [String] { ConnectionOutput.Item.names(items) }

    func taken(_ output: inout ConnectionOutput) -> [String] {
        guard case .batch(let items) = output.takeAll() else { return [] }
        return names(items)
    }

    func event(
        _ output: inout ConnectionOutput, _ subscription: UInt64, _ name: EventName = .change, counted: Bool = true
    )
        -> ConnectionOutput.Enqueued
    {
        output.enqueue(subscription: subscription, event: name, body: [], counted: counted, at: start)
    }

    // MARK: - subscriber_queue

    @Test func aSubscriptionPastItsQueueLagsWithOneMarkerWhileOthersKeepTheirs() {
        var output = output(queue: 2)
        #expect(event(&output, 1) == .queued(wakeWriter: false))
        #expect(event(&output, 2) == .queued(wakeWriter: false))
        _ = output.enqueue(line: Array("response".utf8), at: start)
        #expect(event(&output, 1, .resync, counted: false) == .queued(wakeWriter: false))
        #expect(event(&output, 1) == .queued(wakeWriter: false))
        let lag = event(&output, 1)
        // Its two changes and its resync are dropped, with the change that did not fit.
        #expect(lag == .lagStarted(dropped: 3, wakeWriter: false))
        #expect(lag.droppedEvents == 4)
        let late = event(&output, 1)
        #expect(late == .droppedWhileLagging && late.droppedEvents == 1)
        #expect(event(&output, 2) == .queued(wakeWriter: false))
        #expect(output.lagging == [1])
        #expect(taken(&output) == ["2:change", "line:response", "1:LAGGED", "2:change"])
    }

    @Test func catchUpEventsDoNotCountAgainstTheQueue() {
        var output = output(queue: 2)
        for _ in 0..<10 { _ = event(&output, 1, .state, counted: false) }
        _ = event(&output, 1, .synced, counted: false)
        #expect(event(&output, 1) == .queued(wakeWriter: false))
        #expect(event(&output, 1) == .queued(wakeWriter: false))
        #expect(!output.isLagging)
        #expect(output.items.count == 13)
    }

    @Test func whatTheWriterTookNoLongerCountsAgainstTheQueue() {
        var output = output(queue: 1)
        _ = event(&output, 1)
        _ = output.takeAll()
        #expect(event(&output, 1) == .queued(wakeWriter: false))
        #expect(event(&output, 1) == .lagStarted(dropped: 1, wakeWriter: false))
    }

    @Test func clearingTheLagQueuesAgainBehindTheMarker() {
        var output = output(queue: 1)
        _ = event(&output, 1)
        _ = event(&output, 1)
        output.clearLag(subscription: 1)
        #expect(!output.isLagging)
        #expect(event(&output, 1, .resync, counted: false) == .queued(wakeWriter: false))
        #expect(event(&output, 1) == .queued(wakeWriter: false))
        #expect(taken(&output) == ["1:LAGGED", "1:resync", "1:change"])
    }

    @Test func aForgottenSubscriptionLosesItsLagAndCountButNotItsQueuedEvents() {
        var output = output(queue: 1)
        _ = event(&output, 1)
        _ = event(&output, 2)
        _ = event(&output, 2)
        output.forget(subscription: 1)
        output.forget(subscription: 2)
        #expect(!output.isLagging)
        #expect(names(output.items) == ["1:change", "2:LAGGED"])
        #expect(output.queuedChangeEvents(subscription: 1) == 1)
        #expect(event(&output, 1) == .queued(wakeWriter: false), "the forgotten count still held the event back")
    }

    @Test func anEmptiedBatchIsQueuedIntoAfterTheNextTakeUnlessABacklogGrewIt() {
        var output = output(queue: 4_096)
        _ = event(&output, 1)
        guard case .batch(var first) = output.takeAll() else {
            Issue.record("nothing taken")
            return
        }
        _ = first.popFirst()
        var emptied = first
        emptied.reserveCapacity(32)
        emptied.append(.line([]))
        output.recycle(emptied)
        _ = event(&output, 1)
        _ = output.takeAll()
        #expect(output.items.capacity == 16, "a batch that is not empty is not reused")
        first.reserveCapacity(64)
        output.recycle(first)
        _ = event(&output, 1)
        _ = output.takeAll()
        #expect(output.items.capacity == 64, "the emptied batch's storage was not reused")
        var grown = CircularBuffer<ConnectionOutput.Item>(initialCapacity: 2 * ConnectionOutput.recycledCapacity)
        grown.append(.line([]))
        _ = grown.popFirst()
        output.recycle(grown)
        _ = event(&output, 1)
        _ = output.takeAll()
        #expect(output.items.capacity <= ConnectionOutput.recycledCapacity, "a backlog's storage was kept")
    }

    // MARK: - max_pending_bytes

    @Test func theReaderWaitsAtThePendingBoundAndChangesCostNothing() {
        var output = output(pending: 100)
        _ = output.enqueue(line: Array(repeating: UInt8(ascii: "x"), count: 60), at: start)
        #expect(output.hasRoom && output.readerWaits() == false)
        _ = event(&output, 1, .change)
        #expect(output.pendingBytes == 60)
        _ = event(&output, 1, .phase)  // 48 + 5 + 0
        #expect(output.pendingBytes == 113)
        #expect(!output.hasRoom)
        #expect(output.readerWaits() == true && output.readerIsWaiting)
    }

    @Test func aResponseLargerThanTheBoundIsStillQueuedWhole() {
        var output = output(pending: 10)
        #expect(
            output.enqueue(line: Array(repeating: UInt8(ascii: "x"), count: 500), at: start)
                == .queued(wakeWriter: false))
        #expect(output.pendingBytes == 500)
    }

    @Test func takenBytesStayPendingUntilWrittenThenTheReaderIsReleased() {
        var output = output(pending: 100)
        _ = output.enqueue(line: Array(repeating: UInt8(ascii: "x"), count: 120), at: start)
        #expect(output.readerWaits() == true)
        _ = output.takeAll()
        #expect(output.pendingBytes == 120 && !output.hasRoom)
        let written = output.wrote(at: start + .seconds(1))
        #expect(written == .init(releaseReader: true, queuedAt: start))
        #expect(output.pendingBytes == 0 && !output.readerIsWaiting)
    }

    @Test func aWriteThatLeavesTheConnectionAtTheBoundReleasesNoReader() {
        var output = output(pending: 100)
        _ = output.enqueue(line: Array(repeating: UInt8(ascii: "x"), count: 120), at: start)
        _ = output.takeAll()
        _ = output.enqueue(line: Array(repeating: UInt8(ascii: "y"), count: 100), at: start)
        #expect(output.readerWaits() == true)
        #expect(!output.wrote(at: start).releaseReader)
        #expect(output.readerIsWaiting && output.pendingBytes == 100)
    }

    @Test func roomALagMadeIsTheReadersAtTheNextWrite() {
        var output = output(queue: 1, pending: 100)
        _ = event(&output, 1, .resync, counted: false)
        _ = event(&output, 1, .phase)
        _ = output.enqueue(line: Array(repeating: UInt8(ascii: "x"), count: 50), at: start)
        #expect(output.readerWaits() == true)
        #expect(event(&output, 1, .phase) == .lagStarted(dropped: 2, wakeWriter: false))
        #expect(output.pendingBytes == 50 && output.readerIsWaiting)
        _ = output.takeAll()
        #expect(output.wrote(at: start).releaseReader)
    }

    @Test func takingAgainBeforeTheWriteHoldsBothBatches() {
        var output = output(pending: 100)
        _ = output.enqueue(line: Array(repeating: UInt8(ascii: "x"), count: 70), at: start)
        _ = output.takeAll()
        _ = output.enqueue(line: Array(repeating: UInt8(ascii: "y"), count: 50), at: start + .seconds(1))
        _ = output.takeAll()
        #expect(output.pendingBytes == 120)
        #expect(output.wrote(at: start + .seconds(2)).queuedAt == start)
        #expect(output.pendingBytes == 0)
    }

    @Test func reloadedBoundsApplyToTheNextInput() {
        var output = output(queue: 4, pending: 100)
        _ = event(&output, 1)
        _ = output.enqueue(line: Array(repeating: UInt8(ascii: "x"), count: 120), at: start)
        output.bounds = .init(subscriberQueue: 1, maxPendingBytes: 200)
        #expect(output.hasRoom)
        #expect(event(&output, 1) == .lagStarted(dropped: 1, wakeWriter: false))
    }

    // MARK: - The writer, the reader, the close

    @Test func onlyAWaitingWriterIsWokenAndOnlyOnce() {
        var output = output()
        guard case .nothingQueued = output.takeAll() else {
            Issue.record("an empty output gave the writer something")
            return
        }
        #expect(output.writerWaits() == true)
        #expect(output.enqueue(line: Array("a".utf8), at: start) == .queued(wakeWriter: true))
        #expect(!output.writerIsWaiting)
        #expect(output.enqueue(line: Array("b".utf8), at: start) == .queued(wakeWriter: false))
        #expect(output.writerWaits() == false, "the writer would wait with items queued")
    }

    @Test func anEventDroppedWhileLaggingLeavesTheWriterWaiting() {
        var output = output(queue: 1)
        _ = event(&output, 1)
        _ = event(&output, 1)
        _ = output.takeAll()
        #expect(output.writerWaits() == true)
        #expect(event(&output, 1) == .droppedWhileLagging)
        #expect(output.writerIsWaiting && output.items.isEmpty)
        #expect(event(&output, 2) == .queued(wakeWriter: true))
    }

    @Test func closingRefusesItemsWakesTheWriterAndReleasesTheReaderThenDrains() {
        var output = output(pending: 1)
        _ = output.enqueue(line: Array("a".utf8), at: start)
        #expect(output.readerWaits() == true)
        guard case .batch = output.takeAll() else {
            Issue.record("nothing to take")
            return
        }
        #expect(output.writerWaits() == true)
        #expect(output.close() == .init(wakeWriter: true, releaseReader: true))
        #expect(output.enqueue(line: Array("late".utf8), at: start) == .refused)
        #expect(event(&output, 1) == .refused)
        #expect(output.enqueueCatchUp(subscription: 1, at: start) == .refused)
        #expect(output.readerWaits() == false, "a closed output keeps its reader waiting")
        #expect(output.writerWaits() == false, "a closed output keeps its writer waiting")
        guard case .finished = output.takeAll() else {
            Issue.record("a closed, drained output did not finish the writer")
            return
        }
    }

    // MARK: - stall_timeout_s

    @Test func onlyPendingOutputThatDidNotMoveForLongerThanTheTimeoutIsStalled() {
        let timeout = Duration.seconds(60)
        var output = output()
        #expect(!output.isStalled(timeout: timeout, now: start + .seconds(600)), "idle is not stalled")
        let queued = start + .seconds(100)
        _ = output.enqueue(line: Array("answer".utf8), at: queued)
        #expect(!output.isStalled(timeout: timeout, now: queued + timeout))
        #expect(output.isStalled(timeout: timeout, now: queued + timeout + .nanoseconds(1)))
        // More output while some is pending does not restart the clock.
        _ = output.enqueue(line: Array("more".utf8), at: queued + .seconds(50))
        #expect(output.isStalled(timeout: timeout, now: queued + .seconds(61)))
        output.noteProgress(at: queued + .seconds(30))
        #expect(!output.isStalled(timeout: timeout, now: queued + .seconds(61)))
        _ = output.takeAll()
        #expect(output.isStalled(timeout: timeout, now: queued + .seconds(91)), "taken is still pending")
        _ = output.wrote(at: queued + .seconds(40))
        #expect(!output.isStalled(timeout: timeout, now: queued + .seconds(600)), "written is not pending")
    }

    /// The clock is read only when an enqueue uses its time: the first item of an empty queue.
    @Test func onlyTheFirstItemOfAnEmptyQueueReadsItsTime() {
        var output = output()
        var reads = 0
        func clock(_ time: LoopInstant) -> LoopInstant {
            reads += 1
            return time
        }
        let first = start + .seconds(10)
        _ = output.enqueue(line: Array("a".utf8), at: clock(first))
        #expect(reads == 1)
        _ = output.enqueue(subscription: 1, event: .change, body: [], counted: true, at: clock(start))
        _ = output.enqueue(line: Array("b".utf8), at: clock(start + .seconds(1_000)))
        #expect(reads == 1, "a queue that is not empty reads no time")
        _ = output.takeAll()
        let written = output.wrote(at: first + .seconds(1))
        #expect(written.queuedAt == first, "the batch waited from its first item on")
        _ = output.enqueue(line: Array("c".utf8), at: clock(first + .seconds(2)))
        #expect(reads == 2, "taken, the queue is empty again")
    }

    @Test func aFlushIsPendingUntilWritten() {
        let timeout = Duration.seconds(1)
        var output = output()
        output.flushing(at: start)
        #expect(output.isStalled(timeout: timeout, now: start + .seconds(2)))
        #expect(output.wrote(at: start + .seconds(2)) == .init(releaseReader: false, queuedAt: nil))
        #expect(!output.isStalled(timeout: timeout, now: start + .seconds(5)))
    }

    @Test func aLagWhoseResyncIsNotQueuedYetIsPending() {
        let timeout = Duration.seconds(1)
        var output = output(queue: 1)
        _ = event(&output, 1)
        _ = event(&output, 1)
        _ = output.takeAll()
        _ = output.wrote(at: start)
        #expect(output.isStalled(timeout: timeout, now: start + .seconds(2)))
        output.clearLag(subscription: 1)
        #expect(!output.isStalled(timeout: timeout, now: start + .seconds(2)))
    }

    // MARK: - Impossible transitions

    @Test func reportingAWriteWithNothingTakenStopsTheProcess() async {
        await #expect(processExitsWith: .failure) {
            var output = ConnectionOutput(bounds: .init(subscriberQueue: 1, maxPendingBytes: 1), now: .now)
            _ = output.enqueue(line: Array("a".utf8), at: .now)
            _ = output.wrote(at: .now)
        }
    }

    @Test func flushingWhileABatchIsHeldStopsTheProcess() async {
        await #expect(processExitsWith: .failure) {
            var output = ConnectionOutput(bounds: .init(subscriberQueue: 1, maxPendingBytes: 1), now: .now)
            _ = output.enqueue(line: Array("a".utf8), at: .now)
            _ = output.takeAll()
            output.flushing(at: .now)
        }
    }

    @Test func aSecondWaitingWriterOrReaderStopsTheProcess() async {
        await #expect(processExitsWith: .failure) {
            var output = ConnectionOutput(bounds: .init(subscriberQueue: 1, maxPendingBytes: 1), now: .now)
            _ = output.writerWaits()
            _ = output.writerWaits()
        }
        await #expect(processExitsWith: .failure) {
            var output = ConnectionOutput(bounds: .init(subscriberQueue: 1, maxPendingBytes: 1), now: .now)
            _ = output.enqueue(line: Array("over the bound".utf8), at: .now)
            _ = output.readerWaits()
            _ = output.readerWaits()
        }
    }
}
