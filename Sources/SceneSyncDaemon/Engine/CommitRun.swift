import SceneSyncCore

/// One group commit, from the client groups a pipeline step hands over to their answers, as a value: each point
/// where the engine has to wait for something (a file read, a revision reservation, a file write, the cluster
/// journal) is a stage of its own, not an `await`. No I/O, no clock, no tasks. The shell performs each action (on
/// the engine's thread when it is small, elsewhere when it may block) and reports it with ``advance(_:store:)``;
/// the engine harness runs each blocking action as a step of its own, so an app may write between any two.
///
/// The order is the contract of §3: a file whose content the store does not know is merged before it is replaced;
/// no revision is handed out before it is reserved; a write that displaced an app's content merges that content
/// first, as the change it is; nothing is answered before its file is written (and, for a shared scene, before its
/// journal line is); and once the files are written, the changes are committed whatever the lifecycle says then.
struct CommitRun<Group> {
    /// What the shell does next.
    enum Action {
        /// Read these scene files, whose content the store does not know, before any is replaced. Report
        /// ``Report/filesRead(_:)``.
        case readUnknownFiles([SceneID])
        /// Reserve revisions for `reserve` merges (a failure only defers them), then merge what was read of each of
        /// `files` that is a change. Report ``Report/unknownMerged(accepting:openWriters:)``.
        case mergeUnknownFiles([(scene: SceneID, content: Result<[UInt8]?, SystemError>)], reserve: Int)
        /// Reserve `count` revisions, then take the watcher's events (an app may have opened a file meanwhile).
        /// Report ``Report/reserved(_:openWriters:)``.
        case reserve(Int)
        /// Write each scene's final content (`nil` removes the file). Report
        /// ``Report/written(failures:displaced:)``.
        case write([(scene: SceneID, bytes: [UInt8]?)])
        /// Merge the content each rename displaced, where the store does not know it: an app's write that landed
        /// after the plan. Report ``Report/displacedMerged(_:)`` with the records of those merged.
        case mergeDisplaced([(scene: SceneID, content: FileSystem.Displaced)])
        /// Broadcast these records, committed in revision order. Report ``Report/published(replicated:)``.
        case publish([ChangeRecord])
        /// Wait until the cluster journal holds the lines of the changes just published. Report
        /// ``Report/persisted``.
        case persistJournal
        /// Answer every request: the run is over.
        case answer(Answers)
        /// Answer every request with `error`, nothing changed: the run is over.
        case refuse([Group], SceneSyncError)
    }

    /// What the shell reports once an action is done.
    enum Report {
        case filesRead([Result<[UInt8]?, SystemError>])
        /// `accepting`: whether the daemon still takes client changes. `openWriters`: the scene files an app holds
        /// open for writing now.
        case unknownMerged(accepting: Bool, openWriters: Set<SceneID>)
        /// `failure`: why the revisions could not be reserved.
        case reserved(SceneSyncError?, openWriters: Set<SceneID>)
        case written(
            failures: [SceneID: SystemError], displaced: [(scene: SceneID, content: FileSystem.Displaced)])
        case displacedMerged([SceneID: ChangeRecord])
        /// Whether any record went to the cluster's replicator.
        case published(replicated: Bool)
        case persisted
    }

    /// Everything the answers are made of.
    struct Answers {
        let groups: [Group]
        let requests: [[EngineCore.ChangeRequest]]
        /// One outcome per request, group by group.
        let outcomes: [[GroupCommit.Outcome]]
        let batch: SceneStore.ChangeBatch
        /// The revision each plan's answer names.
        let revisions: [UInt64]
        /// The scenes whose file could not be written: their changes are refused with `unavailable`.
        let failures: [SceneID: SystemError]
    }

    private enum Stage {
        case created
        case readingUnknown([SceneID])
        case mergingUnknown
        case reserving(GroupCommit, openWriters: Set<SceneID>)
        case writing(GroupCommit)
        case mergingDisplaced(GroupCommit, failures: [SceneID: SystemError])
        case publishing(Answers)
        case persisting(Answers)
        case over
    }

    let groups: [Group]
    let requests: [[EngineCore.ChangeRequest]]
    /// The refusal of a change to a scene an app holds open for writing.
    private let stillOpen: (SceneID) -> SceneSyncError
    private var stage = Stage.created

    init(groups: [Group], requests: [[EngineCore.ChangeRequest]], stillOpen: @escaping (SceneID) -> SceneSyncError) {
        precondition(groups.count == requests.count, "a group commit has the requests of each of its groups")
        self.groups = groups
        self.requests = requests
        self.stillOpen = stillOpen
    }

    /// Whether the run has answered.
    var isOver: Bool {
        if case .over = stage { return true }
        return false
    }

    /// The scenes the groups change, each once, in the order of their first request.
    var scenes: [SceneID] {
        var listed = Set<SceneID>()
        return requests.joined().compactMap { listed.insert($0.scene).inserted ? $0.scene : nil }
    }

    /// The first action. `accepting`: whether the daemon takes client changes now. `unknown`: the scenes whose file
    /// content the store does not know (see ``SceneFileState/mustRead(_:in:)``). `openWriters`, `store`: as now,
    /// for a run that reads nothing first.
    mutating func start(
        accepting: Bool, unknown: [SceneID], openWriters: Set<SceneID>, store: SceneStore
    ) -> Action {
        guard case .created = stage else { preconditionFailure("a group commit was started twice") }
        guard accepting else { return refuse(Self.shuttingDown) }
        guard unknown.isEmpty else {
            stage = .readingUnknown(unknown)
            return .readUnknownFiles(unknown)
        }
        return plan(openWriters: openWriters, store: store)
    }

    /// The next action, once the last one is done. A report that does not answer the action asked for is a bug of
    /// the shell, and stops the daemon.
    mutating func advance(_ report: Report, store: inout SceneStore) -> Action {
        switch (stage, report) {
        case (.readingUnknown(let scenes), .filesRead(let contents)):
            precondition(contents.count == scenes.count, "a read reports every file it was asked for")
            stage = .mergingUnknown
            return .mergeUnknownFiles(zip(scenes, contents).map { (scene: $0, content: $1) }, reserve: scenes.count)
        case (.mergingUnknown, .unknownMerged(let accepting, let openWriters)):
            // Merging may have taken a while: the daemon may have begun to shut down meanwhile.
            guard accepting else { return refuse(Self.shuttingDown) }
            return plan(openWriters: openWriters, store: store)
        case (.reserving(var planned, let writersBefore), .reserved(let failure, let openWriters)):
            if let failure { return refuse(failure) }
            // An app may have opened one of these files for writing while the revisions were reserved: such a file
            // is never replaced (§3). Only the pipeline changes the store, so planning again on the writers open
            // now needs no more revisions than were just reserved.
            if openWriters != writersBefore {
                planned = GroupCommit(planning: requests, on: store, openWriters: openWriters, stillOpen: stillOpen)
            }
            return write(planned)
        case (.writing(let planned), .written(let failures, let displaced)):
            stage = .mergingDisplaced(planned, failures: failures)
            return .mergeDisplaced(displaced)
        case (.mergingDisplaced(var planned, let failures), .displacedMerged(let merged)):
            // An app's write that the renames displaced happened first (§3): it was merged as the change it is, and
            // the batch's changes now overwrite it, with it in their conflict records. The file keeps the daemon's
            // content, which the answers describe: every step stays one write per scene.
            planned.rebase(on: store, after: merged)
            let outcomes = planned.settledOutcomes(of: requests, failures: failures, on: store)
            // The files are written: these changes are made, whatever the lifecycle says now.
            let (records, revisions) = planned.commit(into: &store, failed: Set(failures.keys))
            let answers = Answers(
                groups: groups, requests: requests, outcomes: outcomes, batch: planned.batch, revisions: revisions,
                failures: failures)
            stage = .publishing(answers)
            return .publish(records.compactMap { $0 })
        case (.publishing(let answers), .published(let replicated)):
            // A change to a shared scene is answered once its journal line is in the file: a crash after the answer
            // then finds it, whatever it follows (§9).
            guard replicated else { return answer(answers) }
            stage = .persisting(answers)
            return .persistJournal
        case (.persisting(let answers), .persisted):
            return answer(answers)
        default:
            preconditionFailure("a group commit got \(report) while it was \(stage)")
        }
    }

    private mutating func plan(openWriters: Set<SceneID>, store: SceneStore) -> Action {
        let planned = GroupCommit(planning: requests, on: store, openWriters: openWriters, stillOpen: stillOpen)
        guard planned.revisionsNeeded > 0 else { return write(planned) }
        stage = .reserving(planned, openWriters: openWriters)
        return .reserve(planned.revisionsNeeded)
    }

    private mutating func write(_ planned: GroupCommit) -> Action {
        stage = .writing(planned)
        return .write(planned.files)
    }

    private mutating func answer(_ answers: Answers) -> Action {
        stage = .over
        return .answer(answers)
    }

    private mutating func refuse(_ error: SceneSyncError) -> Action {
        stage = .over
        return .refuse(groups, error)
    }

    static var shuttingDown: SceneSyncError { SceneSyncError(.unavailable, "the daemon is shutting down") }
}
