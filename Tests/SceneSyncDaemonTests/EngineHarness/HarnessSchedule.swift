import NIOCore
import SceneSyncCore
import SceneSyncTestKit

@testable import SceneSyncDaemon

/// One seeded schedule over an ``EngineHarness``: two clients `set` scenes, a third follows every change, an app
/// saves and removes their files, the watcher is drained, and the engine's blocking jobs run and report back, each at
/// a moment and in an order the seed picks. ``EngineHarnessTests`` checks it once settled (HarnessSchedule+Invariants.swift).
struct HarnessSchedule {
    let harness: EngineHarness
    let clients: [HarnessClient]
    let subscriber: HarnessSubscriber
    var rng: SplitMix64
    var nextRequest = 1
    /// What happened, step by step, for a replay.
    var trace: [String] = []
    /// The first broken rule, if any.
    var violation: String? = nil

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
    }

    /// Random values for a path of up to three elements, root first.
    mutating func values() -> [Int] {
        (0..<rng.below(4)).map { _ in rng.below(10) }
    }

    /// One step the seed picks, then what the daemon's handlers do at once: a served connection hands over its
    /// next batch, and its answers are read.
    mutating func step() throws {
        let roll = rng.below(100)
        switch roll {
        case 0..<18:
            let client = rng.below(clients.count)
            for _ in 0...rng.below(3) { send(to: client) }
            harness.serve(clients[client])
        case 18..<28:
            trace.append("turn end")
            harness.send(.turnEnded)
        case 28..<44:
            let scene = rng.pick(Self.scenes)
            let values = values()
            trace.append("app writes \(scene) \(values)")
            try harness.appWrite(scene, HarnessClient.fileBytes(values))
        case 44..<47:
            let scene = rng.pick(Self.scenes)
            trace.append("app removes \(scene)")
            harness.appRemove(scene)
        case 47..<58:
            trace.append("drain the watcher")
            harness.send(.drainWatcher)
        case 58..<79:
            guard !harness.waiting.isEmpty else { break }
            let index = rng.below(harness.waiting.count)
            trace.append("run blocking job \(index) of \(harness.waiting.count)")
            harness.runJob(at: index)
        default:
            guard !harness.finished.isEmpty else { break }
            let index = rng.below(harness.finished.count)
            trace.append("deliver completion \(index) of \(harness.finished.count)")
            harness.deliver(at: index)
        }
        try afterStep()
    }

    /// Queues a `set` on a client, as if read from its socket.
    mutating func send(to client: Int) {
        let scene = rng.pick(Self.scenes)
        let values = values()
        let id = nextRequest
        nextRequest += 1
        let (line, fileBytes) = HarnessClient.setLine(id: id, scene: scene, values: values)
        guard case .success(let request) = Command.parse(line) else {
            violation = "request \(id) does not parse"
            return
        }
        trace.append("client \(client) sends \(id): set \(scene) \(values)")
        clients[client].unserved.append(.request(request))
        clients[client].sent.append(.init(id: id, scene: scene, fileBytes: fileBytes))
    }

    /// What the connections' handlers do after any input: hand over the next batch once the last is served, and
    /// read the answers, each checked against the durable revision mark.
    mutating func afterStep() throws {
        for (index, client) in clients.enumerated() {
            harness.serve(client)
            for answer in try client.readAnswers() {
                trace.append("client \(index) reads \(answer.text)")
                if let revision = answer.revision { checkDurable(revision) }
            }
        }
        try subscriber.read()
    }

    /// Runs everything that is left, with time passing for the engine's timers, until nothing is pending; then
    /// asks the engine to settle and checks that it does.
    mutating func settle() throws {
        trace.append("settle")
        for _ in 0..<100 {
            for client in clients { harness.serve(client) }
            harness.send(.turnEnded)
            harness.send(.drainWatcher)
            harness.drainEverything()
            harness.passTime(.seconds(2))
            try afterStep()
            let idle = clients.allSatisfy { $0.unserved.isEmpty && !$0.batchWithEngine }
            if idle, harness.waiting.isEmpty, harness.finished.isEmpty { break }
        }
        let settled = HarnessMailbox<Void>()
        let promise = harness.loop.makePromise(of: Void.self)
        promise.futureResult.whenSuccess { settled.post(()) }
        harness.send(.settle(promise))
        harness.drainEverything()
        try afterStep()
        if settled.takeAll().isEmpty { fail("never settles: the engine's settle is not answered") }
        for (index, client) in clients.enumerated() where !client.unserved.isEmpty || client.batchWithEngine {
            fail("never settles: client \(index) still has \(client.unserved.count) requests unserved")
        }
    }

    mutating func fail(_ message: String) {
        if violation == nil { violation = message }
    }
}
