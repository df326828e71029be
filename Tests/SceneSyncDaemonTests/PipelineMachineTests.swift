import Testing

@testable import SceneSyncDaemon

/// The order of the engine's disk work as a value, checked on every schedule of inputs and finished steps up to a
/// length.
@Suite struct PipelineMachineTests {
    enum Input: Equatable, CaseIterable {
        case event, group, remote, settle
        /// The step in flight is done.
        case finish
    }

    typealias Machine = PipelineMachine<Int, Int, Int, Int>

    @Test func fileEventsGoBeforeRemotesAndRemotesBeforeGroups() {
        var machine = Machine()
        let starts = [
            machine.enqueue(group: 1), machine.enqueue(remote: 2), machine.enqueue(events: [3, 4]),
            machine.enqueue(group: 5), machine.enqueue(remote: 6),
        ]
        #expect(starts == [.start, .queued, .queued, .queued, .queued])
        var steps: [String] = []
        while case .perform(let step) = machine.next() {
            switch step {
            case .mergeFiles(let events): steps.append("files \(events)")
            case .applyRemote(let remote): steps.append("remote \(remote)")
            case .commit(let groups): steps.append("commit \(groups)")
            }
        }
        #expect(steps == ["files [3, 4]", "remote 2", "remote 6", "commit [1, 5]"])
        #expect(!machine.isRunning && machine.queuedCount == 0)
    }

    @Test func settlingAnIdlePipelineReturnsAtOnce() {
        var machine = Machine()
        let idleSettle = machine.settle(1)
        _ = machine.enqueue(events: [1])
        let busySettle = machine.settle(2)
        #expect(idleSettle && !busySettle)
        guard case .perform(.mergeFiles([1])) = machine.next(), case .idle([2]) = machine.next() else {
            Issue.record("the settle waiter was not handed back when the run ended")
            return
        }
    }

    /// Every schedule of up to 7 inputs: one step at a time; every input performed exactly once, in its kind's
    /// order; no remote batch or group commit while file events wait, no group commit while a remote batch waits;
    /// a settle waiter is resumed exactly once, after everything queued before it was done; the machine is idle
    /// exactly when nothing waits.
    @Test func everyScheduleRunsEachInputOnceInOrder() {
        var schedules: [[Input]] = [[]]
        var checked = 0
        for _ in 0..<7 {
            var longer: [[Input]] = []
            for schedule in schedules {
                for input in Input.allCases {
                    let candidate = schedule + [input]
                    if run(candidate) { longer.append(candidate) }
                }
            }
            checked += longer.count
            schedules = longer
        }
        #expect(checked > 20_000, "only \(checked) schedules were checked")
    }

    /// Runs a schedule and checks it; `false` when it finishes a step while none is in flight (the shell reports
    /// only steps it performs).
    func run(_ inputs: [Input]) -> Bool {
        var machine = Machine()
        var nextID = 0
        var queued: [Input: [Int]] = [.event: [], .group: [], .remote: []]
        var inFlight: [Int]? = nil
        var done: Set<Int> = []
        var settles: [Int: Set<Int>] = [:]  // waiter → inputs queued before it
        var resumed: Set<Int> = []

        func perform(_ next: Machine.Next) {
            switch next {
            case .perform(let step):
                let ids: [Int]
                switch step {
                case .mergeFiles(let events):
                    ids = events
                    #expect(events == queued[.event], "file events out of order: \(inputs)")
                    queued[.event] = []
                case .applyRemote(let remote):
                    ids = [remote]
                    #expect(queued[.event] == [], "a remote batch ran while file events waited: \(inputs)")
                    #expect(remote == queued[.remote]?.first, "remote batches out of order: \(inputs)")
                    queued[.remote]?.removeFirst()
                case .commit(let groups):
                    ids = groups
                    #expect(queued[.event] == [] && queued[.remote] == [], "a commit jumped the queue: \(inputs)")
                    #expect(groups == queued[.group], "groups out of order: \(inputs)")
                    queued[.group] = []
                }
                #expect(!ids.isEmpty, "an empty step: \(inputs)")
                inFlight = ids
            case .idle(let waiters):
                #expect(queued.values.allSatisfy { $0.isEmpty }, "the pipeline stopped with work queued: \(inputs)")
                for waiter in waiters {
                    let first = resumed.insert(waiter).inserted
                    #expect(first, "a settle waiter resumed twice: \(inputs)")
                    #expect(settles[waiter]?.isSubset(of: done) == true, "a settle returned early: \(inputs)")
                }
                inFlight = nil
            }
        }

        for input in inputs {
            let id = nextID
            nextID += 1
            switch input {
            case .finish:
                guard let ids = inFlight else { return false }
                done.formUnion(ids)
                perform(machine.next())
            case .settle:
                settles[id] = Set(queued.values.joined()).union(inFlight ?? [])
                if machine.settle(id) {
                    #expect(inFlight == nil && settles[id]?.isEmpty == true, "a settle returned early: \(inputs)")
                    resumed.insert(id)
                }
            case .event, .group, .remote:
                let start: Machine.Start
                switch input {
                case .event: start = machine.enqueue(events: [id])
                case .group: start = machine.enqueue(group: id)
                default: start = machine.enqueue(remote: id)
                }
                queued[input, default: []].append(id)
                #expect((start == .start) == (inFlight == nil), "started while running, or queued while idle")
                if start == .start { perform(machine.next()) }
            }
            #expect(machine.isRunning == (inFlight != nil), "running disagrees with the step in flight: \(inputs)")
            #expect(machine.queuedCount == queued.values.map(\.count).reduce(0, +))
        }
        // Drain: everything queued runs, and every settle waiter is resumed.
        while inFlight != nil {
            done.formUnion(inFlight ?? [])
            perform(machine.next())
        }
        #expect(resumed == Set(settles.keys), "a settle waiter was never resumed: \(inputs)")
        return true
    }
}
