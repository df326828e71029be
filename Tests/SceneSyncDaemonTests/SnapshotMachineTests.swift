import SceneSyncCore
import Testing

@testable import SceneSyncDaemon

/// Snapshot coalescing as a value, checked on every schedule of triggers and finished writes up to a length.
@Suite struct SnapshotMachineTests {
    enum Step: Equatable {
        case trigger(Snapshot.Reason)
        case finish
    }

    @Test func aTriggerWhileIdleWritesAtOnce() {
        var machine = SnapshotMachine<Int>()
        guard case .write(.phase) = machine.trigger(.phase, waiter: 1) else {
            Issue.record("an idle machine did not write")
            return
        }
        #expect(machine.isWriting)
        let (waiters, next) = machine.written()
        #expect(waiters == [1] && next == nil && !machine.isWriting)
    }

    @Test func aBurstDuringAWriteCostsExactlyOneMoreWriteWithTheFirstReason() {
        var machine = SnapshotMachine<Int>()
        _ = machine.trigger(.request, waiter: 0)
        for (waiter, reason) in [(1, Snapshot.Reason.signal), (2, .phase), (3, .request)] {
            guard case .wait = machine.trigger(reason, waiter: waiter) else {
                Issue.record("a second write started while one ran")
                return
            }
        }
        let first = machine.written()
        #expect(first.waiters == [0] && first.next == .signal)
        let second = machine.written()
        #expect(second.waiters == [1, 2, 3] && second.next == nil)
        #expect(!machine.isWriting)
    }

    /// Every schedule of up to 7 steps (triggers of any reason, and finishes of the write under way): at most one
    /// write at a time; every trigger answered exactly once, by a write that started after it; the writes are as
    /// few as that allows; each write has the reason of the first trigger it answers.
    @Test func everyScheduleAnswersEveryTriggerOnceByALaterWrite() {
        let alphabet: [Step] = Snapshot.Reason.allCases.map(Step.trigger) + [.finish]
        var schedules: [[Step]] = [[]]
        var checked = 0
        for _ in 0..<7 {
            var longer: [[Step]] = []
            for schedule in schedules {
                for step in alphabet {
                    let candidate = schedule + [step]
                    if run(candidate) != nil { longer.append(candidate) }
                }
            }
            checked += longer.count
            schedules = longer
        }
        #expect(checked > 10_000, "only \(checked) schedules were checked")
    }

    /// Runs a schedule and checks it; `nil` when it finishes a write while none runs (not a schedule the engine
    /// can produce: the shell reports a finish only for a write it started).
    func run(_ steps: [Step]) -> Int? {
        var machine = SnapshotMachine<Int>()
        var writes: [(reason: Snapshot.Reason, startedAfter: Int)] = []
        var triggers: [Snapshot.Reason] = []
        var answered: [Int: Int] = [:]  // trigger → the write that answered it
        var running: Int? = nil
        for step in steps {
            switch step {
            case .trigger(let reason):
                let id = triggers.count
                triggers.append(reason)
                switch machine.trigger(reason, waiter: id) {
                case .write(let written):
                    #expect(running == nil, "two writes at once: \(steps)")
                    writes.append((written, id))
                    running = writes.count - 1
                case .wait:
                    #expect(running != nil, "a trigger waited while nothing was written: \(steps)")
                }
            case .finish:
                guard let write = running else { return nil }
                let (waiters, next) = machine.written()
                for waiter in waiters {
                    #expect(answered[waiter] == nil, "trigger \(waiter) answered twice: \(steps)")
                    #expect(writes[write].startedAfter >= waiter, "answered by an earlier write: \(steps)")
                    answered[waiter] = write
                }
                #expect(waiters.first.map { triggers[$0] } == writes[write].reason, "reason: \(steps)")
                if let next {
                    writes.append((next, triggers.count - 1))
                    running = writes.count - 1
                } else {
                    running = nil
                }
            }
        }
        #expect(machine.isWriting == (running != nil), "\(steps)")
        // Every trigger is answered, or waits for the write under way or the one after it.
        let waiting = triggers.indices.filter { answered[$0] == nil }
        if running == nil { #expect(waiting.isEmpty, "unanswered triggers: \(steps)") }
        return answered.count
    }
}
