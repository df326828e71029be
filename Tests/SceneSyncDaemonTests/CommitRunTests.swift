import SceneSyncCore
import Testing

@testable import SceneSyncDaemon

/// A group commit as a value (``CommitRun``), driven by a shell that answers each action one way or another: every
/// combination of answers, and the order of the actions, checked.
@Suite struct CommitRunTests {
    typealias Run = CommitRun<Int>

    /// How the shell answers, one choice per point where a run can go two ways.
    struct Choices: CustomStringConvertible {
        var acceptingAtStart = true
        var unknownFile = false
        var acceptingAfterMerge = true
        var reservationFails = false
        var writerOpensMeanwhile = false
        var writeFails = false
        var appWriteDisplaced = false
        var replicated = false

        static var all: [Choices] {
            (0..<(1 << 8)).map { bits in
                Choices(
                    acceptingAtStart: bits & 1 == 0, unknownFile: bits & 2 != 0, acceptingAfterMerge: bits & 4 == 0,
                    reservationFails: bits & 8 != 0, writerOpensMeanwhile: bits & 16 != 0, writeFails: bits & 32 != 0,
                    appWriteDisplaced: bits & 64 != 0, replicated: bits & 128 != 0)
            }
        }

        var description: String {
            "start \(acceptingAtStart), unknown \(unknownFile), after merge \(acceptingAfterMerge), reservation fails "
                + "\(reservationFails), writer \(writerOpensMeanwhile), write fails \(writeFails), displaced "
                + "\(appWriteDisplaced), replicated \(replicated)"
        }
    }

    /// What the shell saw of one run.
    struct Trace {
        var actions: [String] = []
        var answered: [[GroupCommit.Outcome]]? = nil
        var refused: SceneSyncError? = nil
        var written: [SceneID] = []
        var failures: [SceneID: SystemError] = [:]
        var published = 0
        /// The store's revision when each action was handed out.
        var revisions: [UInt64] = []
    }

    static let a = scene("a")
    static let b = scene("b")

    static func request(
        _ id: Int, _ scene: SceneID, _ value: Int, ifVersion: UInt64? = nil
    ) -> EngineCore.ChangeRequest {
        EngineCore.ChangeRequest(
            id: Array("\(id)".utf8),
            operation: .set(path: [Element(tag: "String", value: .string("v\(value)"))], format: nil),
            scene: scene, ifVersion: ifVersion, origin: Origin(source: .client, client: "test"), seenModified: nil)
    }

    /// Two groups: one sets `a` twice, the other sets `b`.
    static let groups: [[EngineCore.ChangeRequest]] = [
        [request(1, a, 1), request(2, a, 2)], [request(3, b, 3)],
    ]

    /// Plays the shell for one run, as the engine does, answering each action as `choices` says.
    func drive(
        _ choices: Choices, store: inout SceneStore, groups: [[EngineCore.ChangeRequest]] = Self.groups
    ) -> Trace {
        var trace = Trace()
        let numbers = Array(groups.indices)
        var run = Run(groups: numbers, requests: groups) { SceneSyncError(.unavailable, "\($0) is open") }
        var action = run.start(
            accepting: choices.acceptingAtStart, unknown: choices.unknownFile ? [Self.a] : [], openWriters: [],
            store: store)
        while true {
            trace.revisions.append(store.revision)
            let report: Run.Report
            switch action {
            case .readUnknownFiles(let scenes):
                trace.actions.append("read")
                report = .filesRead(scenes.map { _ in .success(Array("[5]".utf8)) })
            case .mergeUnknownFiles(let files, let reserve):
                trace.actions.append("merge unknown")
                #expect(reserve == files.count)
                for file in files {
                    if case .success(let bytes) = file.content { _ = store.applyFile(file.scene, bytes: bytes) }
                }
                report = .unknownMerged(accepting: choices.acceptingAfterMerge, openWriters: [])
            case .reserve(let count):
                trace.actions.append("reserve")
                #expect(count > 0)
                report = .reserved(
                    choices.reservationFails ? SceneSyncError(.unavailable, "the disk is full") : nil,
                    openWriters: choices.writerOpensMeanwhile ? [Self.b] : [])
            case .write(let files):
                trace.actions.append("write")
                trace.written = files.map(\.scene)
                var displaced: [(scene: SceneID, content: FileSystem.Displaced)] = []
                for file in files {
                    if choices.writeFails, file.scene == Self.a {
                        trace.failures[file.scene] = SystemError("write", "a.json", errno: 28)
                    } else {
                        let app = choices.appWriteDisplaced && file.scene == Self.a
                        displaced.append((file.scene, app ? .file(Array("[9]".utf8)) : .none))
                    }
                }
                report = .written(failures: trace.failures, displaced: displaced)
            case .mergeDisplaced(let displaced):
                trace.actions.append("merge displaced")
                var merged: [SceneID: ChangeRecord] = [:]
                for case (let scene, .file(let bytes)) in displaced {
                    if case .changed(let record) = store.applyFile(scene, bytes: bytes) { merged[scene] = record }
                }
                report = .displacedMerged(merged)
            case .publish(let records):
                trace.actions.append("publish \(records.count)")
                trace.published += records.count
                report = .published(replicated: choices.replicated && !records.isEmpty)
            case .persistJournal:
                trace.actions.append("persist")
                report = .persisted
            case .answer(let answers):
                trace.actions.append("answer")
                #expect(answers.groups == numbers)
                trace.answered = answers.outcomes
                trace.failures = answers.failures
                #expect(run.isOver)
                return trace
            case .refuse(let groups, let error):
                trace.actions.append("refuse")
                #expect(groups == numbers)
                trace.refused = error
                #expect(run.isOver)
                return trace
            }
            action = run.advance(report, store: &store)
        }
    }

    @Test func aPlainRunReservesWritesCommitsPublishesAndAnswersInThatOrder() {
        var store = SceneStore(epoch: "test")
        let trace = drive(Choices(), store: &store)
        #expect(trace.actions == ["reserve", "write", "merge displaced", "publish 3", "answer"])
        #expect(trace.written == [Self.a, Self.b])
        // Nothing is committed before the files are written: the store moves only once they are.
        #expect(trace.revisions == [0, 0, 0, 3, 3])
        #expect(store.scene(Self.a)?.version == 2 && store.scene(Self.b)?.version == 1)
    }

    /// Every combination of the shell's answers: each request is answered exactly once, by outcome or refusal; a
    /// refused run changed nothing the requests asked for and wrote nothing after the refusal; a file is written
    /// only after its revisions are reserved; the journal is waited for exactly when a record went to it (none does when every change failed or was refused), before
    /// the answers; a scene whose write failed keeps its state; a writer that opened a file meanwhile keeps its
    /// file unwritten.
    @Test(arguments: Choices.all) func everyAnswerOfTheShellKeepsTheOrder(_ choices: Choices) {
        var store = SceneStore(epoch: "test")
        let trace = drive(choices, store: &store)
        let actions = trace.actions
        let refused =
            !choices.acceptingAtStart || (choices.unknownFile && !choices.acceptingAfterMerge)
            || choices.reservationFails
        #expect((trace.refused != nil) == refused, "\(choices): \(actions)")
        #expect((trace.answered != nil) != refused, "\(choices): \(actions)")
        if refused {
            #expect(!actions.contains("write"), "\(choices): \(actions)")
            #expect(store.scene(Self.b) == nil, "\(choices)")
            return
        }
        let outcomes = trace.answered ?? []
        #expect(outcomes.map(\.count) == Self.groups.map(\.count), "\(choices)")
        if let reserve = actions.firstIndex(of: "reserve"), let write = actions.firstIndex(of: "write") {
            #expect(reserve < write, "\(choices): \(actions)")
        } else {
            Issue.record("\(choices): a run that changes scenes reserves and writes: \(actions)")
        }
        let journaled = choices.replicated && trace.published > 0
        #expect(actions.contains("persist") == journaled, "\(choices): \(actions)")
        if journaled {
            #expect(actions.suffix(2) == ["persist", "answer"], "\(choices): \(actions)")
        }
        #expect(trace.written.contains(Self.b) != choices.writerOpensMeanwhile, "\(choices): \(trace.written)")
        if choices.writerOpensMeanwhile {
            guard case .refused = outcomes[1][0] else {
                Issue.record("\(choices): a change to a file an app opened meanwhile was not refused")
                return
            }
            #expect(store.scene(Self.b) == nil)
        } else {
            #expect(store.scene(Self.b)?.version == 1, "\(choices)")
        }
        if choices.writeFails {
            #expect(trace.failures[Self.a] != nil)
            // Unchanged by the requests: only a merged file (the unknown one) may have made it.
            #expect(store.scene(Self.a)?.version ?? 0 <= 1, "\(choices)")
        } else {
            let expected: UInt64 = (choices.unknownFile ? 1 : 0) + (choices.appWriteDisplaced ? 1 : 0) + 2
            #expect(store.scene(Self.a)?.version == expected, "\(choices)")
        }
    }

    @Test func aReportThatAnswersNoActionAskedForStopsTheDaemon() async {
        await #expect(processExitsWith: .failure) {
            var store = SceneStore(epoch: "test")
            var run = CommitRun<Int>(groups: [0], requests: [[CommitRunTests.request(1, CommitRunTests.a, 1)]]) {
                SceneSyncError(.unavailable, "\($0) is open")
            }
            _ = run.start(accepting: true, unknown: [], openWriters: [], store: store)
            // The run asked for a reservation: a write's report is a shell bug.
            _ = run.advance(.written(failures: [:], displaced: []), store: &store)
        }
    }

    /// A change refused on `if_version` after its group's change to the same scene names that change as the history
    /// holds it: renumbered behind an app's write that the rename displaced, and never, as a conflict, when that
    /// change's write failed (the scene then never had it).
    @Test func aRefusalAfterItsGroupsChangeNamesTheSceneAsItWas() {
        // `a` does not exist: request 1 creates it, request 2 expects it not to exist, refused on 1's planned state.
        let groups = [[Self.request(1, Self.a, 1), Self.request(2, Self.a, 2, ifVersion: 0)]]
        var store = SceneStore(epoch: "test")
        let rebased = drive(Choices(appWriteDisplaced: true), store: &store, groups: groups)
        guard case .refused(let conflict) = rebased.answered?[0][1] else {
            Issue.record("request 2 was not refused: \(String(describing: rebased.answered))")
            return
        }
        // The app's write is version 1, request 1's change version 2: the refusal names version 2, as committed.
        #expect(conflict.code == .conflict)
        #expect(conflict.current?.version == 2 && store.scene(Self.a)?.version == 2)
        #expect(conflict.current?.path == store.scene(Self.a)?.path)

        var failing = SceneStore(epoch: "test")
        let failed = drive(Choices(writeFails: true), store: &failing, groups: groups)
        guard case .refused(let unavailable) = failed.answered?[0][1] else {
            Issue.record("request 2 was not refused: \(String(describing: failed.answered))")
            return
        }
        #expect(unavailable.code == .unavailable, "\(unavailable)")
        #expect(failing.scene(Self.a) == nil)
    }

    /// A deletion whose removal found the file gone, removed by an app in the rename's window: the app's removal is
    /// the deletion, and the client's comes after it, on a scene that no longer exists, so it is refused as planning
    /// it then would: `not_found`, or a `conflict` when it names the version it expected.
    @Test(arguments: [nil, 1] as [UInt64?])
    func aDeletionOfASceneAnAppRemovedMeanwhileIsRefusedAsOfAMissingScene(ifVersion: UInt64?) {
        var store = SceneStore(epoch: "test")
        _ = store.applyFile(Self.a, bytes: Array(#"["String","\"v0\""]"#.utf8))
        let delete = EngineCore.ChangeRequest(
            id: Array("1".utf8), operation: .delete, scene: Self.a, ifVersion: ifVersion,
            origin: Origin(source: .client, client: "test"), seenModified: store.scene(Self.a)?.modified)
        var run = Run(groups: [0], requests: [[delete]]) { SceneSyncError(.unavailable, "\($0) is open") }
        var action = run.start(accepting: true, unknown: [], openWriters: [], store: store)
        guard case .reserve = action else {
            Issue.record("expected a reservation, got \(action)")
            return
        }
        action = run.advance(.reserved(nil, openWriters: []), store: &store)
        guard case .write(let files) = action, files.count == 1, files[0].bytes == nil else {
            Issue.record("expected the removal of a, got \(action)")
            return
        }
        action = run.advance(.written(failures: [:], displaced: [(Self.a, .none)]), store: &store)
        guard case .mergeDisplaced = action else {
            Issue.record("expected a merge, got \(action)")
            return
        }
        var merged: [SceneID: ChangeRecord] = [:]
        if case .changed(let record) = store.applyFile(Self.a, bytes: nil) { merged[Self.a] = record }
        #expect(merged[Self.a]?.kind == .delete)
        action = run.advance(.displacedMerged(merged), store: &store)
        guard case .publish(let records) = action else {
            Issue.record("expected a publish, got \(action)")
            return
        }
        #expect(records.isEmpty)
        action = run.advance(.published(replicated: false), store: &store)
        guard case .answer(let answers) = action, case .refused(let error) = answers.outcomes[0][0] else {
            Issue.record("the deletion was not refused: \(action)")
            return
        }
        #expect(error.code == (ifVersion == nil ? .notFound : .conflict), "\(error)")
        #expect(error.current == nil)
        #expect(store.scene(Self.a) == nil && store.revision == 2)
    }
}
