import NIOCore
import SceneSyncCore
import SceneSyncTestKit

@testable import SceneSyncDaemon

/// One seeded schedule over an ``EngineHarness``: two clients send changes, reads, `sync`s and snapshot triggers, a
/// third connection follows every change and a fourth does so behind a small `subscriber_queue`, reading only when
/// the seed says so; an app saves and removes files, the watcher is drained, the kernel's queue overflows, a rescan
/// cannot list the directory, a scene's write fails as on a full disk, and the engine's blocking jobs run and report
/// back, each at a moment and in an order the seed picks. Each answer is checked as it is read
/// (HarnessSchedule+Answers.swift, HarnessSchedule+Barriers.swift), the revisions after every step, and everything
/// once the schedule settled (HarnessSchedule+Invariants.swift).
struct HarnessSchedule {
    let harness: EngineHarness
    let clients: [HarnessClient]
    let subscriber: HarnessSubscriber
    let lagging: HarnessLaggingSubscriber
    var rng: SplitMix64
    var nextRequest = 1
    /// What happened, step by step, for a replay.
    var trace: [String] = []
    /// The first broken rule, if any.
    var violation: String? = nil
    /// Every app write (a save or a removal), in order.
    var appWrites: [AppWrite] = []
    /// The app writes before this one may have had their events lost to an overflow: a change decided while the
    /// rescan is owed need not follow them (a barrier still must).
    var lostBefore = 0
    /// Scenes whose write failed as on a full disk, one entry a failure: what may answer `unavailable`.
    var failedWrites: [SceneID] = []
    /// Whether a rescan's listing fails now.
    var listingFails = false
    /// The history records checked so far, step by step.
    var recordsChecked = 0
    /// Each revision an answer acknowledged as its change, with the change.
    var acknowledged: [UInt64: String] = [:]

    /// An app's save (`values`) or removal (`nil`), with the store's revision when it was made.
    struct AppWrite {
        let scene: SceneID
        let values: [Int]?
        let revision: UInt64
    }

    /// Few scenes, so that clients and the app meet on the same files.
    static let scenes: [SceneID] = ["s0", "s1", "s2"].compactMap { SceneID($0) }

    /// Odd seeds send every file step through the blocking executor (see
    /// ``EngineHarness/init(inlinesSmallFileSteps:)``), even seeds run the small ones on the loop, as the daemon does.
    init(seed: UInt64) throws {
        harness = try EngineHarness(inlinesSmallFileSteps: seed % 2 == 0)
        rng = SplitMix64(seed: seed)
        trace.append(seed % 2 == 0 ? "small file steps on the loop" : "every file step a blocking job")
        clients = [harness.connect(), harness.connect()]
        subscriber = try harness.subscribe()
        lagging = try harness.subscribeLagging()
    }

    /// Random values for a path of up to three elements, root first.
    mutating func values() -> [Int] {
        (0..<rng.below(4)).map { _ in rng.below(10) }
    }

    /// One step the seed picks, then what the daemon's handlers do at once: a served connection hands over its
    /// next batch, and its answers are read.
    mutating func step() throws {
        switch rng.below(100) {
        case 0..<18:
            let client = rng.below(clients.count)
            for _ in 0...rng.below(3) { send(to: client) }
            serve(client)
        case 18..<26:
            trace.append("turn end")
            harness.send(.turnEnded)
        case 26..<40:
            let scene = rng.pick(Self.scenes)
            let values = values()
            trace.append("app writes \(scene) \(values)")
            try harness.appWrite(scene, HarnessClient.fileBytes(values))
            appWrites.append(AppWrite(scene: scene, values: values, revision: harness.core.store.revision))
        case 40..<43:
            let scene = rng.pick(Self.scenes)
            trace.append("app removes \(scene)")
            if harness.appRemove(scene) {
                appWrites.append(AppWrite(scene: scene, values: nil, revision: harness.core.store.revision))
            }
        case 43..<52:
            trace.append("drain the watcher")
            harness.send(.drainWatcher)
        case 52..<70:
            guard !harness.waiting.isEmpty else { break }
            let index = rng.below(harness.waiting.count)
            trace.append("run blocking job \(index) of \(harness.waiting.count)")
            harness.runJob(at: index)
        case 70..<86:
            guard !harness.finished.isEmpty else { break }
            let index = rng.below(harness.finished.count)
            trace.append("deliver completion \(index) of \(harness.finished.count)")
            harness.deliver(at: index)
        case 86..<92:
            trace.append("the slow subscriber reads")
            try lagging.read(harness.core)
        case 92..<94:
            let scene = rng.pick(Self.scenes)
            trace.append("the disk is full for the next write of \(scene)")
            harness.faults.failNextWrite(of: scene)
        case 94..<96:
            trace.append("the kernel's queue overflows")
            harness.overflow()
            lostBefore = appWrites.count
        case 96..<98:
            listingFails.toggle()
            trace.append(listingFails ? "listings fail" : "listings work again")
            harness.listingFails(listingFails)
        default:
            trace.append("tick")
            harness.tick()
        }
        try afterStep()
    }

    /// Queues a request on a client, as if read from its socket.
    mutating func send(to client: Int) {
        let request = randomRequest()
        let id = nextRequest
        nextRequest += 1
        let line = request.line(id: id)
        guard case .success(let parsed) = Command.parse(Array(line.utf8)) else {
            fail("request \(line) does not parse")
            return
        }
        trace.append("client \(client) sends \(line)")
        clients[client].unserved.append(.request(parsed))
        clients[client].sent.append(.init(id: id, request: request))
    }

    /// Hands a client's unserved requests to the engine, as its handler does once the batch before is served,
    /// noting when each was first handed over.
    mutating func serve(_ index: Int) {
        let client = clients[index]
        harness.takeServed(client)
        if !client.batchWithEngine {
            let moment = HarnessClient.Moment(revision: harness.core.store.revision, appWrites: appWrites.count)
            for offset in (client.sent.count - client.unserved.count)..<client.sent.count
            where client.sent[offset].handedOver == nil {
                client.sent[offset].handedOver = moment
            }
        }
        harness.serve(client)
    }

    /// What the connections' handlers do after any input: hand over the next batch once the last is served, and
    /// read the answers, each checked as it is read; then the rules that hold after every step.
    mutating func afterStep() throws {
        for (index, client) in clients.enumerated() {
            serve(index)
            let first = client.answers.count
            for (offset, answer) in try client.readAnswers().enumerated() {
                trace.append("client \(index) reads \(answer.text)")
                failedWrites += harness.faults.takeFired()
                guard first + offset < client.sent.count, client.sent[first + offset].id == answer.id else {
                    fail("client \(index) read \(answer.text) where another answer was due")
                    continue
                }
                check(answer, client.sent[first + offset])
            }
        }
        try subscriber.read()
        failedWrites += harness.faults.takeFired()
        checkStep()
    }

    /// Runs everything that is left, with time passing for the engine's timers and the housekeeping tick retrying
    /// what failed, until nothing is pending; then asks the engine to settle and checks that it does.
    mutating func settle() throws {
        trace.append("settle")
        harness.faults.disarm()
        harness.listingFails(false)
        for _ in 0..<100 {
            for index in clients.indices { serve(index) }
            harness.send(.turnEnded)
            harness.send(.drainWatcher)
            harness.tick()
            harness.drainEverything()
            harness.passTime(.seconds(2))
            try afterStep()
            try lagging.read(harness.core)
            let idle = clients.allSatisfy { $0.unserved.isEmpty && !$0.batchWithEngine }
            // A rescan owed after a failed listing is retried at a tick that finds no step running; the daemon's
            // housekeeping ticks every second until one does.
            let owesRescan = harness.core.sceneFiles.rescanOwed != nil
            if idle, !owesRescan, harness.waiting.isEmpty, harness.finished.isEmpty { break }
        }
        let settled = HarnessMailbox<Void>()
        let promise = harness.loop.makePromise(of: Void.self)
        promise.futureResult.whenSuccess { settled.post(()) }
        harness.send(.settle(promise))
        harness.drainEverything()
        try afterStep()
        try lagging.read(harness.core)
        if settled.takeAll().isEmpty { fail("never settles: the engine's settle is not answered") }
        for (index, client) in clients.enumerated() where !client.unserved.isEmpty || client.batchWithEngine {
            fail("never settles: client \(index) still has \(client.unserved.count) requests unserved")
        }
    }

    mutating func fail(_ message: String) {
        if violation == nil { violation = message }
    }
}
