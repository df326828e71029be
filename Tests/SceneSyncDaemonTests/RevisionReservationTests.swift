import Testing

@testable import SceneSyncDaemon

/// The revision high-water mark as a value, checked on every schedule of steps that hand out revisions and of
/// writes of the mark that succeed or fail, up to a length.
@Suite struct RevisionReservationTests {
    static let block: UInt64 = 4

    enum Step: CaseIterable {
        /// A step that hands out one revision, or three (most of a block).
        case handOutOne, handOutThree
        /// The write of the mark under way finishes.
        case writeSucceeds, writeFails
    }

    /// The shell, played by hand as `EngineCore.reserveRevisions` plays it: what the state directory durably holds,
    /// the revisions handed out, the write under way (and the step that started it) and the steps parked until it
    /// finishes. A parked step whose own write failed is refused; one that waited for another step's write tries
    /// again with its own.
    struct Shell {
        var machine = RevisionReservation<Int>(durable: RevisionReservationTests.block, block: block)
        var onDisk = RevisionReservationTests.block
        var revision: UInt64 = 0
        var writing: UInt64? = nil
        var writtenFor: Int? = nil
        var parked: [Int: Int] = [:]
        var nextStep = 0
        var anyFailed = false
        var waitsWithoutNeed = 0
        /// The first broken property, recorded once the schedules are run (an `#expect` per step is too slow for
        /// tens of thousands of schedules).
        var violation: String? = nil

        mutating func check(_ condition: Bool, _ message: String) {
            if !condition, violation == nil { violation = message }
        }

        mutating func handOut(_ count: Int, step: Int) throws {
            switch machine.prepare(count, after: revision) {
            case .ready(let ahead):
                if let ahead { try start(ahead, for: nil) }
                revision += UInt64(count)
                check(revision <= onDisk, "r\(revision) handed out with only r\(onDisk) on disk")
            case .mustWait(let mark):
                if let mark { try start(mark, for: step) }
                check(writing != nil, "a step waits while nothing is written")
                check(machine.wait(step), "a step could not wait for the write under way")
                parked[step] = count
            }
        }

        mutating func start(_ mark: UInt64, for step: Int?) throws {
            check(writing == nil, "a second write of the mark while one is under way")
            check(mark > onDisk, "a write of r\(mark) would lower the mark r\(onDisk)")
            writing = mark
            writtenFor = step
        }

        /// Returns false when the step cannot happen now (no write under way).
        mutating func apply(_ step: Step) throws -> Bool {
            switch step {
            case .handOutOne, .handOutThree:
                let count = step == .handOutOne ? 1 : 3
                let quiet = writing == nil && !anyFailed
                let parkedBefore = parked.count
                nextStep += 1
                try handOut(count, step: nextStep)
                // With nothing failed, the block reserved ahead covers any step of at most half a block.
                if quiet, count <= Int(block / 2), parked.count > parkedBefore { waitsWithoutNeed += 1 }
            case .writeSucceeds, .writeFails:
                guard let mark = writing else { return false }
                let failure = step == .writeFails ? "disk full" : nil
                if failure == nil { onDisk = mark } else { anyFailed = true }
                writing = nil
                let resumed = machine.finished(mark, failure: failure)
                check(Set(resumed) == Set(parked.keys), "resumed \(resumed), parked \(parked.keys.sorted())")
                let waiting = parked
                let owner = writtenFor
                parked = [:]
                writtenFor = nil
                // The step whose own write failed is refused; every other one prepares again.
                for (step, count) in waiting.sorted(by: { $0.key < $1.key }) where failure == nil || step != owner {
                    try handOut(count, step: step)
                }
            }
            check(machine.durable == onDisk, "the machine holds r\(machine.durable), the disk r\(onDisk)")
            check(machine.writing == writing, "the machine and the shell disagree on the write under way")
            check(revision <= onDisk, "r\(revision) handed out with only r\(onDisk) on disk")
            check(parked.isEmpty || writing != nil, "steps wait while nothing is written")
            return true
        }
    }

    @Test func aStepWithinTheBlockIsReadyAndReservesTheNextOneAtHalf() {
        var machine = RevisionReservation<Int>(durable: 8, block: 8)
        guard case .ready(nil) = machine.prepare(1, after: 0) else {
            Issue.record("a step early in the block waited or reserved")
            return
        }
        guard case .ready(.some(16)) = machine.prepare(1, after: 3) else {
            Issue.record("the step reaching half the block did not reserve the next one")
            return
        }
        guard case .ready(nil) = machine.prepare(1, after: 4) else {
            Issue.record("a second reservation started while one was written")
            return
        }
        #expect(machine.finished(16, failure: nil).isEmpty)
        #expect(machine.durable == 16 && machine.writing == nil)
    }

    /// The shell's `await` between ``RevisionReservation/prepare(_:after:)`` and ``RevisionReservation/wait(_:)``
    /// may let the write finish first: the wait then says so, and its outcome is known.
    @Test func aWriteThatFinishedBeforeTheWaitIsNoWait() {
        var machine = RevisionReservation<Int>(durable: 8, block: 8)
        guard case .mustWait(.some(28)) = machine.prepare(20, after: 0) else {
            Issue.record("a step beyond the block did not wait for a reservation that covers it")
            return
        }
        #expect(machine.finished(28, failure: nil).isEmpty)
        let waits = machine.wait(1)
        #expect(!waits, "a waiter parked for a write that is over would never be resumed")
        #expect(machine.covers(20, after: 0))
        guard case .ready = machine.prepare(20, after: 0) else {
            Issue.record("after the write, the step still did not find its revisions reserved")
            return
        }
    }

    @Test func aStepBeyondTheBlockWaitsAndAFailureIsKeptUntilAWriteSucceeds() {
        var machine = RevisionReservation<Int>(durable: 8, block: 8)
        guard case .mustWait(.some(28)) = machine.prepare(20, after: 0) else {
            Issue.record("a step beyond the block did not wait for a reservation that covers it")
            return
        }
        let waits = machine.wait(1)
        #expect(waits)
        #expect(machine.finished(28, failure: "disk full") == [1])
        #expect(machine.durable == 8 && machine.lastFailure == "disk full")
        #expect(!machine.covers(20, after: 0) && machine.covers(8, after: 0))
        guard case .ready(nil) = machine.prepare(2, after: 5) else {
            Issue.record("after a failure, a step the block still covers tried the state directory again")
            return
        }
        guard case .mustWait(.some(28)) = machine.prepare(20, after: 0) else {
            Issue.record("after a failure, the next step did not try again")
            return
        }
        #expect(machine.finished(28, failure: nil).isEmpty)
        #expect(machine.lastFailure == nil && machine.covers(20, after: 0))
    }

    /// Every schedule of up to 8 steps: a revision is handed out only once the mark on disk covers it; one write at
    /// a time, never lowering the mark; every parked step resumed by the write it waited for; and, while no write
    /// failed, a step of at most half a block never waits.
    @Test func everyScheduleHandsOutOnlyDurablyReservedRevisions() throws {
        var schedules: [Shell] = [Shell()]
        var all: [Shell] = []
        var checked = 0
        for _ in 0..<8 {
            var longer: [Shell] = []
            for shell in schedules {
                for step in Step.allCases {
                    var next = shell
                    if try next.apply(step) { longer.append(next) }
                }
            }
            checked += longer.count
            all += longer
            schedules = longer
        }
        #expect(checked > 10_000, "only \(checked) schedules were checked")
        #expect(all.compactMap(\.violation).first == nil)
        #expect(all.allSatisfy { $0.waitsWithoutNeed == 0 }, "a small step waited though nothing failed")
    }
}
