import SceneSyncCore
import SceneSyncTestKit

@testable import SceneSyncDaemon

/// The engine's pure parts (``SceneStore``, ``PipelineMachine``, ``CommitRun``, ``SnapshotMachine``,
/// ``SyncBarriers``, ``RevisionReservation``, a subscriber's ``Outbox``) and the shell's rescan after an inotify
/// overflow (whose listing may fail, and is then retried by the housekeeping tick) driven by one seeded schedule, over a simulated scenes directory and
/// state directory, apps, clients and a subscriber to everything: the idea of FoundationDB's simulation. The
/// shell's part (read a file, rename one into place, write the revision mark) is played here, one action per step,
/// so an app may write between any two of them, and a mark may take any time to reach the disk. ``check()`` holds SPEC §3–§5 after every
/// step; the same seed gives the same schedule.
struct EngineSimulation {
    /// A client change as the simulation tracks it, beside the engine's request.
    struct Request {
        let id: Int
        let request: EngineCore.ChangeRequest
        /// How many file events the engine had taken when the request arrived: all must be merged before it is
        /// decided (§3).
        let eventsTakenBefore: Int
        /// A read (`get`) of the client's: answered at once by the engine, never committed.
        var isRead = false
    }

    /// A step of the pipeline in flight, between the shell's actions.
    enum InFlight {
        /// Read the files the events name, reserve a revision for each, then merge them.
        case merge([SceneDirectoryEvent])
        /// The group commit planned; `written` of its files are renamed into place so far.
        case commit(Commit)
    }

    /// A group commit in flight: the engine's own ``CommitRun``, the action its shell performs next, and how far
    /// the simulated shell got with it.
    struct Commit {
        var run: CommitRun<[Request]>
        var action: CommitRun<[Request]>.Action
        /// How many of the write action's files are renamed into place so far, and what became of them.
        var written = 0
        var failures: [SceneID: SystemError] = [:]
        var displaced: [(scene: SceneID, content: FileSystem.Displaced)] = []
        /// The app writes the renames displaced.
        var displacedWrites: [Int] = []
        /// The displaced app writes merged, for the check of their conflict records once the batch is committed.
        var merged: [SceneID: ChangeRecord] = [:]
    }

    /// One write of an app: whether the daemon read it (merged it, or found it displaced by its rename) or the app
    /// wrote again over it first.
    struct AppWrite {
        let scene: SceneID
        let bytes: [UInt8]?
        var seen = false
        /// The store's revision once its content was merged (or found to be no change).
        var seenAt: UInt64? = nil
    }

    var rng: SplitMix64
    let scenes: [SceneID]
    /// The paths apps and clients choose from, with their file bytes.
    let paths: [(elements: [Element], bytes: [UInt8])]

    var store = SceneStore(epoch: "simulation")
    var pipeline = PipelineMachine<SceneDirectoryEvent, [Request], Never, Int>()
    var snapshots = SnapshotMachine<Int>()
    /// A block small enough that schedules cross it often.
    static let revisionBlock: UInt64 = 8
    var revisions = RevisionReservation<Never>(durable: revisionBlock, block: revisionBlock)
    /// The revision high-water mark as the state directory holds it.
    var markOnDisk = revisionBlock
    var barriers = SyncBarriers<Int>()
    /// Each `phase background` request: how many app writes came before it (its snapshot must hold them, §5).
    var phaseWritesBefore: [Int: Int] = [:]
    /// The scenes directory: each file's bytes.
    var files: [SceneID: [UInt8]] = [:]
    /// Events the kernel holds, not yet taken by the engine.
    var kernelQueue: [SceneDirectoryEvent] = []
    var inFlight: InFlight? = nil
    /// A rescan whose listing of the directory failed, owed until a housekeeping tick retries it.
    var rescanOwed = false
    /// Whether listings may fail (they stop failing once the schedule settles, as a fault that clears).
    var listingsMayFail = true

    var nextID = 0
    /// File events the engine has taken, and merged, so far.
    var eventsTaken = 0
    var eventsMerged = 0
    var appWrites: [AppWrite] = []
    /// The app write each scene's file holds now, if an app wrote it last.
    var currentAppWrite: [SceneID: Int] = [:]
    /// Every record broadcast, in order: what a subscriber to every scene receives.
    var broadcast: [ChangeRecord] = []
    /// What a subscriber holds of each scene, built from the records (or a resync) alone.
    typealias View = [SceneID: (version: UInt64, path: [Element])]
    /// The subscriber's view, built from the records alone.
    var subscriberView: View = [:]
    /// A subscriber to everything behind the daemon's own ``Outbox`` with a tiny `subscriber_queue`, which reads
    /// when the schedule says so: it lags often, and must then get a resync, never a gap.
    static let subscriberQueue = 4
    let outbox = Outbox(limit: subscriberQueue, counters: DeliveryCounters())
    /// What the outbox's subscriber was handed, and the last revision it saw (or resynced at).
    var outboxView: View = [:]
    var outboxSeen: UInt64 = 0
    var answered: [Int: GroupCommit.Outcome] = [:]
    /// Requests the engine was handed (by the client's connection).
    var submitted = 0
    /// The client's connection (see EngineSimulation+client.swift): its reader, the requests its socket holds, its
    /// output of answers, the batch with the engine, the answers in the order they were queued, and how many of
    /// them the client read.
    var clientGate = ReadGate<Request>()
    var clientSocket: [Request] = []
    var clientSentOrder: [Int] = []
    /// NIO passed a read on: what the socket holds is read at the next chance.
    var clientReadOutstanding = true
    let clientOutput = Outbox(
        limit: 64, counters: DeliveryCounters(), maxPendingBytes: EngineSimulation.clientPendingBytes)
    var clientBatch: [Int]? = nil
    /// The reads of the batch answered before its changes went to the group commit.
    var clientServedBeforeBatch = 0
    var clientAnswerOrder: [Int] = []
    var clientAnswersRead = 0
    /// Each snapshot trigger's revision when it fired, and the revision its snapshot held, once written.
    var triggerRevisions: [Int: UInt64] = [:]
    var snapshotRevision: UInt64? = nil
    var snapshotsHeld: [Int: UInt64] = [:]
    /// The first broken invariant, with the step it broke at.
    var violation: String? = nil
    var steps = 0
    /// What happened, step by step, for a replayed seed.
    var trace: [String]? = nil

    init(seed: UInt64, tracing: Bool = false) throws {
        rng = SplitMix64(seed: seed)
        scenes = ["a", "b", "c"].compactMap { SceneID($0) }
        let codec = SceneFileCodec()
        paths = try ["[]", "[1]", "[1,2]", "[2]", "[3,1]", "[\"x\"]"].map { text in
            let bytes = Array(text.utf8)
            return (try codec.decode(bytes).path, bytes)
        }
        if tracing { trace = [] }
    }

    mutating func note(_ line: @autoclosure () -> String) {
        trace?.append("\(steps): \(line())")
    }

    mutating func fail(_ message: String) {
        if violation == nil { violation = "step \(steps): \(message)" }
    }
}
