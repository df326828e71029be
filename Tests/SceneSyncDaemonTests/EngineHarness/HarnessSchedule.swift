import NIOCore
import SceneSyncCore
import SceneSyncTestKit

@testable import SceneSyncDaemon

/// One seeded schedule over an ``EngineHarness``: two clients send changes, reads, `sync`s and snapshot triggers
/// through their connections' ``ReadGate`` and read their answers, behind a small `max_pending_bytes`, a third
/// connection follows every change and a fourth does so behind a small `subscriber_queue`; an app saves and removes
/// files, the watcher is drained, the kernel's queue overflows, a rescan cannot list the directory, a scene's write
/// fails as on a full disk, and the engine's blocking jobs run and report back, each at a moment and in an order the
/// seed picks (the clients and the slow subscriber read only when it says so). Each answer is checked as it is read
/// (HarnessSchedule+Answers.swift, HarnessSchedule+Barriers.swift), the connections and the revisions after every
/// step, the files after every group commit (HarnessSchedule+FilesWritten.swift), and everything once the schedule
/// settled (HarnessSchedule+Invariants.swift, HarnessSchedule+AppWritesKept.swift).
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
    /// Each scene file's content as last seen (`nil`: no file).
    var fileSeen: [SceneID: [UInt8]?] = [:]
    /// The app write whose content each scene file holds; absent once the daemon replaced it.
    var fileOwner: [SceneID: Int] = [:]
    /// The app saves the daemon replaced on disk, in order.
    var replacedAppWrites: [Int] = []
    /// The app saves the daemon read while their file held them, in order.
    var readAppWrites: [Int] = []
    /// Those of them that a group commit's write displaced before the daemon merged them.
    var displacedAppWrites: [Int] = []
    /// Every file step is a blocking job (odd seeds): a step that runs one job does one file call and nothing else.
    let fileStepsAreJobs: Bool
    /// The step now is one blocking job's call, on a seed where every file step is one.
    var stepIsOneFileCall = false
    /// How many records the history held when the step began.
    var recordsAtStepStart = 0
    /// Scenes a client change was recorded for, whose file is still to be checked.
    var committedUnchecked: Set<SceneID> = []
    /// The history records looked at for client changes so far.
    var committedRecordsChecked = 0

    /// An app's save (`values`) or removal (`nil`), with the store's revision when it was made.
    struct AppWrite {
        let scene: SceneID
        let values: [Int]?
        let revision: UInt64
    }

    /// The clients' bounds: a `max_pending_bytes` of about two answers, so that a client that does not read puts its
    /// connection at the bound, with a batch with the engine, a read held back, or a reader waiting for room.
    static let clientLimits = ConnectionLimits(maxPendingBytes: 100)

    /// Few scenes, so that clients and the app meet on the same files.
    static let scenes: [SceneID] = ["s0", "s1", "s2"].compactMap { SceneID($0) }

    /// Odd seeds send every file step through the blocking executor (see
    /// ``EngineHarness/init(inlinesSmallFileSteps:)``), even seeds run the small ones on the loop, as the daemon does.
    init(seed: UInt64) throws {
        harness = try EngineHarness(inlinesSmallFileSteps: seed % 2 == 0)
        fileStepsAreJobs = seed % 2 != 0
        rng = SplitMix64(seed: seed)
        trace.append(seed % 2 == 0 ? "small file steps on the loop" : "every file step a blocking job")
        clients = [harness.connect(limits: Self.clientLimits), harness.connect(limits: Self.clientLimits)]
        subscriber = try harness.subscribe()
        lagging = try harness.subscribeLagging()
    }

    /// Random values for a path of up to three elements, root first.
    mutating func values() -> [Int] {
        (0..<rng.below(4)).map { _ in rng.below(10) }
    }

    /// One step the seed picks (a client reads its answers only when it picks that), then what the daemon's
    /// handlers do at once: a served batch lets the connection's gate go on, and a read passed on takes what the
    /// client wrote.
    mutating func step() throws {
        stepIsOneFileCall = false
        recordsAtStepStart = harness.core.store.history.records.count
        switch rng.below(100) {
        case 0..<16:
            let client = rng.below(clients.count)
            for _ in 0...rng.below(3) { send(to: client) }
        case 16..<26:
            try readAnswers(of: rng.below(clients.count))
        case 26..<32:
            trace.append("turn end")
            harness.send(.turnEnded)
        case 32..<44:
            let scene = rng.pick(Self.scenes)
            let values = values()
            trace.append("app writes \(scene) \(values)")
            try harness.appWrite(scene, HarnessClient.fileBytes(values))
            appWrites.append(AppWrite(scene: scene, values: values, revision: harness.core.store.revision))
            noteAppWrite(scene)
        case 44..<47:
            let scene = rng.pick(Self.scenes)
            trace.append("app removes \(scene)")
            if harness.appRemove(scene) {
                appWrites.append(AppWrite(scene: scene, values: nil, revision: harness.core.store.revision))
                noteAppWrite(scene)
            }
        case 47..<55:
            trace.append("drain the watcher")
            harness.send(.drainWatcher)
        case 55..<70:
            guard !harness.waiting.isEmpty else { break }
            let index = rng.below(harness.waiting.count)
            trace.append("run blocking job \(index) of \(harness.waiting.count)")
            harness.runJob(at: index)
            stepIsOneFileCall = fileStepsAreJobs
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

    /// A client writes a request to its connection's socket.
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
        clients[client].sent.append(.init(id: id, request: request))
        clients[client].write(.request(parsed))
    }

    /// A client reads the answers queued for it, each checked as it is read; the room it makes lets its
    /// connection go on.
    mutating func readAnswers(of index: Int) throws {
        let client = clients[index]
        let first = client.answers.count
        trace.append("client \(index) reads its answers")
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

    /// What the connections' handlers do after any input: a batch the engine served lets the gate go on, and a read
    /// passed on takes what the client wrote; then the rules that hold after every step.
    mutating func afterStep() throws {
        for (index, client) in clients.enumerated() {
            client.takeServed()
            client.socketReads()
            if let problem = client.problems.first { fail("client \(index)'s connection: \(problem)") }
        }
        try subscriber.read()
        failedWrites += harness.faults.takeFired()
        checkStep()
        checkFilesWritten()
    }

    mutating func fail(_ message: String) {
        if violation == nil { violation = message }
    }
}
