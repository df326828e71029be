import SceneSyncCore
import Testing

@testable import SceneSyncClient

/// The state machine behind `ScenePath`, input by input: what it shows, what it reports, and what it holds back
/// while its own writes are in flight.
@Suite struct MirrorStateTests {
    typealias State = MirrorState<Int>
    let id: SceneID

    init() throws {
        id = try #require(SceneID("com.example.App.window-1"))
    }

    func elements(_ values: [Int]) throws(SceneSyncClientError) -> [Element] {
        do {
            return try values.map { try Element(tag: "Swift.Int", json: Array("\($0)".utf8)) }
        } catch {
            throw SceneSyncClientError(.unencodableRoute, "\(error)")
        }
    }

    func scene(_ values: [Int], version: UInt64, modified: UInt64) throws -> SceneState {
        SceneState(
            id: id, version: version, created: 1, modified: modified, format: .codable, path: try elements(values))
    }

    func change(_ values: [Int], version: UInt64, revision: UInt64, epoch: String = "e") throws -> ChangeRecord {
        ChangeRecord(
            clock: Clock(epoch: epoch, revision: revision), scene: id, kind: .set, version: version, format: .codable,
            path: try elements(values), origin: .file)
    }

    /// A mirror that has seen `[1]` at version 1, revision 5, and is ready.
    func readyState() throws -> State {
        var state = State()
        _ = state.receive(state: try scene([1], version: 1, modified: 5), decoded: .success([1]))
        _ = state.receive(synced: Clock(epoch: "e", revision: 5))
        return state
    }

    func routes(_ outcome: State.Outcome) -> [[Int]] {
        outcome.emissions.compactMap {
            if case .routes(let routes) = $0 { return routes }
            return nil
        }
    }

    @Test func theInitialStateShowsButIsNotReported() throws {
        var state = State()
        let first = state.receive(state: try scene([1], version: 1, modified: 5), decoded: .success([1]))
        #expect(first.emissions.isEmpty && first.shownChanged)
        let (synced, _, failure) = state.receive(synced: Clock(epoch: "e", revision: 5))
        #expect(synced.emissions.isEmpty && failure == nil)
        #expect(state.readiness.ready && state.shown == [1] && state.confirmed.version == 1)
    }

    @Test func aSceneWithoutStateIsEmptyAndDoesNotExist() {
        var state = State()
        _ = state.receive(synced: Clock(epoch: "e", revision: 9))
        #expect(state.readiness.ready && state.shown.isEmpty && !state.confirmed.exists && state.confirmed.version == 0)
        #expect(state.confirmed.writeFormat == .codable)
    }

    @Test func anUndecodableInitialStateFailsTheMirror() throws {
        var state = State()
        let error = SceneSyncClientError(.undecodableElement, "element 0 is a MyApp.Other", index: 0)
        _ = state.receive(state: try scene([1], version: 1, modified: 5), decoded: .failure(error))
        let (_, _, failure) = state.receive(synced: Clock(epoch: "e", revision: 5))
        #expect(failure as? SceneSyncClientError == error)
        #expect(throws: SceneSyncClientError.self) { _ = try state.beginWrite() }
    }

    @Test func anotherWritersChangeIsShownAndReported() throws {
        var state = try readyState()
        let outcome = state.receive(change: try change([1, 2], version: 2, revision: 6), decoded: .success([1, 2]))
        #expect(routes(outcome) == [[1, 2]] && outcome.shownChanged)
        #expect(state.shown == [1, 2] && state.confirmed.version == 2)
    }

    @Test func changesArriveHeldWhileAWriteIsInFlightAndOwnOnesAreNotReported() throws {
        var state = try readyState()
        var base = try state.beginWrite()
        // The daemon's change event for our write overtakes its answer.
        let early = state.receive(change: try change([1, 7], version: 2, revision: 6), decoded: .success([1, 7]))
        #expect(early.emissions.isEmpty && state.writes.held.count == 1)
        base.elements = try elements([1, 7])
        base.routes = [1, 7]
        base.version = 2
        base.clock = Clock(epoch: "e", revision: 6)
        let ended = state.endWrite(committed: base)
        #expect(routes(ended).isEmpty, "the mirror's own write was reported as another writer's")
        #expect(state.shown == [1, 7] && state.confirmed.version == 2 && state.writes.held.isEmpty)
    }

    @Test func aForeignChangeHeldBehindAWriteIsReportedAfterIt() throws {
        var state = try readyState()
        var base = try state.beginWrite()
        _ = state.receive(change: try change([1, 7], version: 2, revision: 6), decoded: .success([1, 7]))
        _ = state.receive(change: try change([1, 7, 8], version: 3, revision: 7), decoded: .success([1, 7, 8]))
        base.elements = try elements([1, 7])
        base.routes = [1, 7]
        base.version = 2
        base.clock = Clock(epoch: "e", revision: 6)
        let ended = state.endWrite(committed: base)
        #expect(routes(ended) == [[1, 7, 8]])
        #expect(state.shown == [1, 7, 8] && state.confirmed.version == 3)
    }

    /// A write waits out a daemon restart. The resumed subscription replays another writer's change made meanwhile
    /// (held, since the write is in flight) and then `synced`; the write then meets that change as a conflict and
    /// commits on top of it. The other writer's change is reported once, before this mirror's own.
    @Test func aChangeReplayedWhileAWriteWaitsIsReportedDespiteTheSyncedThatFollows() throws {
        var state = try readyState()
        _ = try state.beginWrite()
        let replayed = state.receive(change: try change([1, 9], version: 2, revision: 6), decoded: .success([1, 9]))
        #expect(replayed.emissions.isEmpty && state.writes.held.count == 1)
        let (synced, _, _) = state.receive(synced: Clock(epoch: "e", revision: 6))
        #expect(synced.emissions.isEmpty)
        let (conflict, adopted) = state.adopt(try scene([1, 9], version: 2, modified: 6), decoded: .success([1, 9]))
        var base = adopted
        #expect(routes(conflict) == [[1, 9]], "the other writer's change was never reported")
        base.elements = try elements([1, 9, 4])
        base.routes = [1, 9, 4]
        base.version = 3
        base.clock = Clock(epoch: "e", revision: 7)
        let ended = state.endWrite(committed: base)
        #expect(routes(ended).isEmpty, "reported twice, or the mirror's own write reported")
        #expect(state.shown == [1, 9, 4] && state.confirmed.version == 3 && state.writes.held.isEmpty)
    }

    /// The same without a conflict: the held change is taken in when the write ends without covering it.
    @Test func aChangeHeldAcrossSyncedIsTakenInWhenTheWriteFails() throws {
        var state = try readyState()
        _ = try state.beginWrite()
        _ = state.receive(change: try change([1, 9], version: 2, revision: 6), decoded: .success([1, 9]))
        _ = state.receive(synced: Clock(epoch: "e", revision: 8))
        let ended = state.endWrite(committed: nil)
        #expect(routes(ended) == [[1, 9]])
        #expect(state.shown == [1, 9] && state.confirmed.version == 2)
        #expect(state.confirmed.clock == Clock(epoch: "e", revision: 8), "the view is complete at the synced clock")
    }

    @Test func aFailedWriteReleasesTheHeldChangesAsForeign() throws {
        var state = try readyState()
        _ = try state.beginWrite()
        _ = state.receive(change: try change([2], version: 2, revision: 6), decoded: .success([2]))
        let ended = state.endWrite(committed: nil)
        #expect(routes(ended) == [[2]] && state.writes.count == 0)
    }

    @Test func anOlderChangeNeverRegressesTheMirror() throws {
        var state = try readyState()
        _ = state.receive(change: try change([1, 2], version: 2, revision: 6), decoded: .success([1, 2]))
        let stale = state.receive(change: try change([9], version: 1, revision: 4), decoded: .success([9]))
        #expect(stale.emissions.isEmpty && state.shown == [1, 2])
    }

    @Test func aConflictAnswerIsAdoptedOnlyWhenNewer() throws {
        var state = try readyState()
        _ = state.receive(change: try change([1, 2], version: 3, revision: 7), decoded: .success([1, 2]))
        let (older, olderBase) = state.adopt(try scene([5], version: 2, modified: 6), decoded: .success([5]))
        #expect(older.emissions.isEmpty && state.confirmed.version == 3)
        // The next attempt still builds on what the daemon said: the compare-and-set is checked against it.
        #expect(olderBase.version == 2 && olderBase.routes == [5])
        let (newer, newerBase) = state.adopt(try scene([6], version: 4, modified: 8), decoded: .success([6]))
        #expect(routes(newer) == [[6]] && state.confirmed.version == 4 && newerBase.version == 4)
    }

    @Test func aSceneDeletedAndCreatedAgainIsTheNextBaseThoughItsVersionIsLower() throws {
        var state = try readyState()
        _ = state.receive(change: try change([1, 2], version: 7, revision: 9), decoded: .success([1, 2]))
        _ = try state.beginWrite()
        // Deleted and created again by another writer: version 1, at a later revision.
        let (outcome, base) = state.adopt(try scene([3], version: 1, modified: 11), decoded: .success([3]))
        #expect(base.version == 1 && base.routes == [3], "the retry would send the stale if_version 7 again")
        #expect(routes(outcome) == [[3]] && state.confirmed.version == 1)
    }

    @Test func aResyncDropsTheChangesHeldFromTheViewItReplaces() throws {
        var state = try readyState()
        _ = try state.beginWrite()
        _ = state.receive(change: try change([9], version: 2, revision: 6), decoded: .success([9]))
        state.receiveResync()
        _ = state.receive(state: try scene([4], version: 1, modified: 1), decoded: .success([4]))
        _ = state.receive(synced: Clock(epoch: "f", revision: 1))
        let ended = state.endWrite(committed: nil)
        #expect(routes(ended).isEmpty && state.shown == [4], "a change of the old epoch came back after the resync")
    }

    @Test func aDeletionEmptiesThePathAndAResyncWithoutStateToo() throws {
        var state = try readyState()
        let deletion = ChangeRecord(
            clock: Clock(epoch: "e", revision: 6), scene: id, kind: .delete, version: 2, format: .codable, path: nil,
            origin: .file)
        let outcome = state.receive(change: deletion, decoded: .success([]))
        #expect(routes(outcome) == [[]] && !state.confirmed.exists && state.confirmed.version == 0)

        var other = try readyState()
        other.receiveResync()
        let (resynced, _, _) = other.receive(synced: Clock(epoch: "f", revision: 1))
        #expect(routes(resynced) == [[]] && !other.confirmed.exists)
        #expect(other.confirmed.clock == Clock(epoch: "f", revision: 1))
    }

    @Test func aForeignElementLaterIsReportedAndKeepsTheLastGoodRoutes() throws {
        var state = try readyState()
        let error = SceneSyncClientError(.undecodableElement, "element 1 is a MyApp.Other", index: 1)
        let outcome = state.receive(change: try change([1, 2], version: 2, revision: 6), decoded: .failure(error))
        guard case .failure(let reported)? = outcome.emissions.first else {
            Issue.record("the undecodable change was not reported")
            return
        }
        #expect(reported == error && state.shown == [1])
        #expect(throws: SceneSyncClientError.self) { _ = try state.beginWrite() }
    }

    @Test func bindingValuesShowAtOnceAndCoalesce() throws {
        var state = try readyState()
        let startsWriter = state.setFromBinding([1, 2])
        let startsAnother = state.setFromBinding([1, 2, 3])
        #expect(startsWriter && !startsAnother, "one writer must take every value")
        #expect(state.shown == [1, 2, 3] && state.hasPendingWrites)
        // Another writer's change does not replace what the user just set.
        _ = state.receive(change: try change([1, 4], version: 2, revision: 6), decoded: .success([1, 4]))
        #expect(state.shown == [1, 2, 3])
        guard case .write(let edit) = state.takeBindingValue(encode: elements) else {
            Issue.record("the writer got no edit")
            return
        }
        #expect(edit.kept == (try elements([1])) && edit.popped.isEmpty && edit.pushedRoutes == [2, 3])
        guard case .stop(let stopped, _) = state.takeBindingValue(encode: elements) else {
            Issue.record("the writer did not stop")
            return
        }
        #expect(stopped.shownChanged && !state.hasPendingWrites)
        #expect(state.shown == [1, 4], "the daemon's state did not come back after the writer stopped")
    }

    /// `lastPhase` is the scene's phase as the daemon held it when the mirror opened: from the `state` before the
    /// first `synced`, never from a later one (a resync brings the phase the app itself reported since).
    @Test func lastPhaseComesFromTheStateBeforeTheFirstSyncedOnly() throws {
        var state = State()
        var active = try scene([1], version: 1, modified: 5)
        active.phase = .active
        _ = state.receive(state: active, decoded: .success([1]))
        _ = state.receive(synced: Clock(epoch: "e", revision: 5))
        #expect(state.lastPhase == .active)

        state.receiveResync()
        var background = try scene([1], version: 1, modified: 5)
        background.phase = .background
        _ = state.receive(state: background, decoded: .success([1]))
        _ = state.receive(synced: Clock(epoch: "f", revision: 1))
        #expect(state.lastPhase == .active, "a later state changed lastPhase")

        // Never reported: nil, also for a scene that does not exist.
        var unreported = State()
        _ = unreported.receive(state: try scene([1], version: 1, modified: 5), decoded: .success([1]))
        _ = unreported.receive(synced: Clock(epoch: "e", revision: 5))
        #expect(unreported.lastPhase == nil)
        var missing = State()
        _ = missing.receive(synced: Clock(epoch: "e", revision: 5))
        #expect(missing.lastPhase == nil)

        // Deleted during the catch-up (a resync without its state before the first synced): it has none.
        var deleted = State()
        _ = deleted.receive(state: active, decoded: .success([1]))
        deleted.receiveResync()
        _ = deleted.receive(synced: Clock(epoch: "f", revision: 9))
        #expect(deleted.lastPhase == nil)
    }
}
