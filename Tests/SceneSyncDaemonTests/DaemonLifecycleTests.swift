import Testing

@testable import SceneSyncDaemon

@Suite("DaemonLifecycle: what may happen in each state, and what signals do")
struct DaemonLifecycleTests {
    typealias Activity = DaemonLifecycle.Activity

    /// Drives a fresh lifecycle into `state` through its own inputs only.
    static func lifecycle(in state: DaemonLifecycle.State) -> DaemonLifecycle {
        var lifecycle = DaemonLifecycle()
        switch state {
        case .starting:
            break
        case .ready:
            _ = lifecycle.becomeReady()
        case .draining:
            _ = lifecycle.becomeReady()
            _ = lifecycle.beginDraining()
        case .stopped:
            _ = lifecycle.becomeReady()
            _ = lifecycle.beginDraining()
            lifecycle.stop()
        }
        #expect(lifecycle.state == state)
        return lifecycle
    }

    static let table: [(DaemonLifecycle.State, Set<Activity>)] = [
        (.starting, [.mergeFileChanges, .broadcast]),
        (.ready, Set(Activity.allCases)),
        (.draining, [.writeSnapshot, .serveReads]),
        (.stopped, []),
    ]

    @Test("the permission table, every state against every activity", arguments: table)
    func permissions(_ state: DaemonLifecycle.State, _ allowed: Set<Activity>) {
        let lifecycle = Self.lifecycle(in: state)
        for activity in Activity.allCases {
            #expect(lifecycle.permits(activity) == allowed.contains(activity), "\(state) \(activity)")
        }
    }

    @Test("nothing is merged or broadcast once draining began (§4: the final snapshot is the last revision told)")
    func drainingFreezesTheState() {
        let draining = Self.lifecycle(in: .draining)
        #expect(!draining.permits(.mergeFileChanges))
        #expect(!draining.permits(.broadcast))
        #expect(!draining.permits(.acceptClientChanges))
    }

    @Test("signals while ready act at once")
    func readySignals() {
        var lifecycle = Self.lifecycle(in: .ready)
        let step1 = lifecycle.receive(.backgroundPhase)
        #expect(step1 == .writeSnapshot)
        let step2 = lifecycle.receive(.reload)
        #expect(step2 == .reload)
        let step3 = lifecycle.receive(.terminate(name: "SIGTERM"))
        #expect(step3 == .beginShutdown)
        let step4 = lifecycle.receive(.terminate(name: "SIGINT"))
        #expect(step4 == .beginShutdown)
    }

    @Test("signals while starting wait for ready, and many of a kind act once (§7)")
    func deferredOnce() {
        var lifecycle = DaemonLifecycle()
        for _ in 0..<5 {
            let step5 = lifecycle.receive(.backgroundPhase)
            #expect(step5 == nil)
            let step6 = lifecycle.receive(.reload)
            #expect(step6 == nil)
        }
        let step7 = lifecycle.becomeReady()
        #expect(step7 == [.reload, .writeSnapshot])
        #expect(lifecycle.state == .ready)
        // Acted on: a later readiness (impossible, but asked) repeats nothing.
        let step8 = lifecycle.becomeReady()
        #expect(step8 == [])
    }

    @Test("a termination while starting is a graceful shutdown once ready, and makes the others moot")
    func deferredTermination() {
        var lifecycle = DaemonLifecycle()
        let step9 = lifecycle.receive(.backgroundPhase)
        #expect(step9 == nil)
        let step10 = lifecycle.receive(.terminate(name: "SIGTERM"))
        #expect(step10 == nil)
        let step11 = lifecycle.receive(.reload)
        #expect(step11 == nil)
        let step12 = lifecycle.becomeReady()
        #expect(step12 == [.beginShutdown])
        let step13 = lifecycle.beginDraining()
        #expect(step13)
        #expect(lifecycle.state == .draining)
    }

    @Test(
        "no signal asks for anything while draining or stopped", arguments: [DaemonLifecycle.State.draining, .stopped])
    func lateSignals(_ state: DaemonLifecycle.State) {
        var lifecycle = Self.lifecycle(in: state)
        for signal in [DaemonSignal.backgroundPhase, .reload, .terminate(name: "SIGTERM")] {
            let step14 = lifecycle.receive(signal)
            #expect(step14 == nil)
        }
        #expect(lifecycle.state == state)
    }

    @Test("impossible transitions change nothing")
    func impossibleTransitions() {
        var starting = DaemonLifecycle()
        let step15 = starting.beginDraining()
        #expect(!step15, "draining before ready: termination is deferred instead")
        #expect(starting.state == .starting)
        var draining = Self.lifecycle(in: .draining)
        let step16 = draining.beginDraining()
        #expect(!step16)
        let step17 = draining.becomeReady()
        #expect(step17 == [])
        #expect(draining.state == .draining)
        var stopped = Self.lifecycle(in: .stopped)
        stopped.stop()
        let step18 = stopped.beginDraining()
        #expect(!step18)
        #expect(stopped.state == .stopped)
    }
}
