import SceneSyncCore
import Testing

@testable import SceneSyncClient

/// The binding half of `MirrorState`: values set through `ScenePath.routes` are written as edits (§10), rebased onto
/// the path a write landed on, and dropped (with a `writeDropped` failure and the newer path) when they no longer
/// apply. Each test drives the state the way `ScenePath`'s background writer does, against a scene held here in
/// place of the daemon, so every step of a race is chosen rather than hoped for.
@Suite struct MirrorBindingTests {
    typealias State = MirrorState<Int>

    /// The scene as the daemon holds it: what a compare-and-set is checked against.
    struct Daemon {
        var values: [Int]
        var version: UInt64
        var revision: UInt64

        /// Another writer's change, acknowledged.
        mutating func change(to values: [Int]) {
            self.values = values
            version += 1
            revision += 1
        }
    }

    let id: SceneID

    init() throws {
        id = try #require(SceneID("com.example.App.window-1"))
    }

    static func elements(_ values: [Int]) throws(SceneSyncClientError) -> [Element] {
        do {
            return try values.map { try Element(tag: "Swift.Int", json: Array("\($0)".utf8)) }
        } catch {
            throw SceneSyncClientError(.unencodableRoute, "\(error)")
        }
    }

    static func values(_ elements: [Element]) -> [Int] {
        elements.compactMap { Int(String(decoding: $0.item, as: UTF8.self)) }
    }

    func scene(_ daemon: Daemon) throws -> SceneState {
        SceneState(
            id: id, version: daemon.version, created: 1, modified: daemon.revision, format: .codable,
            path: try Self.elements(daemon.values))
    }

    func change(_ daemon: Daemon) throws -> ChangeRecord {
        ChangeRecord(
            clock: Clock(epoch: "e", revision: daemon.revision), scene: id, kind: .set, version: daemon.version,
            format: .codable, path: try Self.elements(daemon.values), origin: .file)
    }

    /// A mirror that has seen the daemon's scene and is ready.
    func ready(_ daemon: Daemon) throws -> State {
        var state = State()
        _ = state.receive(state: try scene(daemon), decoded: .success(daemon.values))
        _ = state.receive(synced: Clock(epoch: "e", revision: daemon.revision))
        return state
    }

    struct Unexpected: Error, CustomStringConvertible {
        var description: String
    }

    /// The edit the background writer takes next; throws when it gets something else.
    func nextEdit(_ state: inout State) throws -> PathEdit<Int> {
        let job = state.takeBindingValue(encode: Self.elements)
        guard case .write(let edit) = job else { throw Unexpected(description: "the writer got no edit: \(job)") }
        return edit
    }

    /// What `ScenePath.write(_:)` does with an edit, against `daemon`: a compare-and-set on the version the mirror
    /// knows, and on a conflict the edit applied again to the scene the conflict told. Returns the write's outcome.
    func write(_ edit: PathEdit<Int>, _ state: inout State, _ daemon: inout Daemon) throws -> State.Outcome {
        var base = try state.beginWrite()
        while true {
            guard let target = edit.apply(to: base.view, routes: base.routes) else {
                return state.bindingWriteFailed(State.dropped(edit), writing: true)
            }
            if base.exists, target.elements == base.view {
                return state.bindingWriteLanded(onto: base, result: base, committed: false)
            }
            guard base.version == daemon.version else {
                // `conflict`, with the scene as it is.
                (_, base) = state.adopt(try scene(daemon), decoded: .success(daemon.values))
                continue
            }
            daemon.change(to: Self.values(target.elements))
            let committed = base.written(
                target.elements, target.routes, version: daemon.version, revision: daemon.revision)
            return state.bindingWriteLanded(onto: base, result: committed, committed: true)
        }
    }

    /// The routes and failures an outcome reports, in order, as `[Int]` or the failure's code.
    static func reported(_ outcome: State.Outcome) -> [String] {
        outcome.emissions.map { emission in
            switch emission {
            case .routes(let routes): "\(routes)"
            case .failure(let error): error.code.rawValue
            }
        }
    }

    /// The writer finds nothing left and stops; returns what it reported.
    func stop(_ state: inout State) -> State.Outcome? {
        guard case .stop(let outcome, _) = state.takeBindingValue(encode: Self.elements) else {
            Issue.record("the writer did not stop")
            return nil
        }
        return outcome
    }

    @Test func aValueSetWhileAWriteIsInFlightIsRebasedOntoThePathItLandedOn() throws {
        var daemon = Daemon(values: [1], version: 1, revision: 5)
        var state = try ready(daemon)
        let startsWriter = state.setFromBinding([1, 2])
        #expect(startsWriter)
        let first = try nextEdit(&state)
        #expect(first.kept == (try Self.elements([1])) && first.popped.isEmpty && first.pushedRoutes == [2])

        // Another writer pushes 9 before the write reaches the daemon; its change event arrives meanwhile.
        daemon.change(to: [1, 9])
        _ = state.receive(change: try change(daemon), decoded: .success(daemon.values))
        // The user pushes 3 on what they see while the first write is in flight.
        let startsAnother = state.setFromBinding([1, 2, 3])
        #expect(!startsAnother, "a second writer was started")
        #expect(state.shown == [1, 2, 3])
        _ = try write(first, &state, &daemon)
        #expect(daemon.values == [1, 9, 2], "the first edit was not applied on top of the other writer's push")

        // The second value is the same edit on the path the first write landed on: push 3, nothing popped.
        let second = try nextEdit(&state)
        #expect(second.kept == (try Self.elements([1, 9, 2])), "\(second.kept)")
        #expect(second.popped.isEmpty && second.pushedRoutes == [3])
        _ = try write(second, &state, &daemon)
        #expect(daemon.values == [1, 9, 2, 3])

        // Done: the mirror shows the scene, and reports it, since it is not what the binding set.
        let stopped = try #require(stop(&state))
        #expect(Self.reported(stopped) == ["[1, 9, 2, 3]"])
        #expect(stopped.shownChanged && state.shown == [1, 9, 2, 3] && !state.hasPendingWrites)
    }

    /// Values keep coming while writes are in flight (a user tapping faster than the daemon answers): each is an
    /// edit of what the user sees, which never showed the other writer's push, so every one of them must still go
    /// on top of that push, not only the first two.
    @Test func everyLaterValueStaysOnTopOfAnotherWritersPush() throws {
        var daemon = Daemon(values: [1], version: 1, revision: 5)
        var state = try ready(daemon)
        let startsWriter = state.setFromBinding([1, 2])
        #expect(startsWriter)
        let first = try nextEdit(&state)
        daemon.change(to: [1, 9])
        let startsAnother = state.setFromBinding([1, 2, 3])
        #expect(!startsAnother)
        _ = try write(first, &state, &daemon)
        let second = try nextEdit(&state)
        // The user pushes 4 while the second write is in flight.
        let startsAThird = state.setFromBinding([1, 2, 3, 4])
        #expect(!startsAThird)
        _ = try write(second, &state, &daemon)
        #expect(daemon.values == [1, 9, 2, 3])
        let third = try nextEdit(&state)
        #expect(third.popped.isEmpty, "the third value pops \(Self.values(third.popped)) from \(daemon.values)")
        _ = try write(third, &state, &daemon)
        #expect(daemon.values == [1, 9, 2, 3, 4], "the other writer's acknowledged push was lost")
        _ = stop(&state)
        #expect(state.shown == daemon.values)
    }

    @Test func aDroppedEditReportsTheFailureThenTheNewerPathAndShowsIt() throws {
        var daemon = Daemon(values: [1, 2], version: 1, revision: 5)
        var state = try ready(daemon)
        // Pop to root, based on [1, 2]; another writer pushes 3 above the popped part before the write arrives.
        let startsWriter = state.setFromBinding([])
        #expect(startsWriter)
        let popToRoot = try nextEdit(&state)
        #expect(popToRoot.kept.isEmpty && popToRoot.popped.count == 2 && popToRoot.pushed.isEmpty)
        daemon.change(to: [1, 2, 3])
        let dropped = try write(popToRoot, &state, &daemon)
        #expect(Self.reported(dropped) == ["write_dropped", "[1, 2, 3]"], "the failure must come first")
        guard case .failure(let failure)? = dropped.emissions.first else { return }
        #expect(failure.message.contains("popping 2"), "\(failure.message)")
        #expect(daemon.values == [1, 2, 3] && daemon.version == 2, "the dropped edit was written")

        let stopped = try #require(stop(&state))
        #expect(stopped.shownChanged && state.shown == [1, 2, 3], "the newer path does not show")
        #expect(!state.hasPendingWrites && state.binding.idle)
    }

    @Test func aValueThatNoLongerAppliesWhereTheLastWriteLandedIsDropped() throws {
        var daemon = Daemon(values: [1, 2], version: 1, revision: 5)
        var state = try ready(daemon)
        let startsWriter = state.setFromBinding([1, 2, 3])
        #expect(startsWriter)
        let push = try nextEdit(&state)
        daemon.change(to: [1, 2, 9])
        // While the push is in flight the user pops back to [1]: that would pop the other writer's 9 too.
        let startsAnother = state.setFromBinding([1])
        #expect(!startsAnother)
        _ = try write(push, &state, &daemon)
        #expect(daemon.values == [1, 2, 9, 3])
        guard case .dropped(let dropped) = state.takeBindingValue(encode: Self.elements) else {
            Issue.record("the pop was not dropped")
            return
        }
        #expect(Self.reported(dropped) == ["write_dropped", "[1, 2, 9, 3]"])
        _ = stop(&state)
        #expect(state.shown == [1, 2, 9, 3] && daemon.values == [1, 2, 9, 3])
    }

    /// A value set right after a drop, before the writer takes its next value: an `onChange` handler delivered
    /// right away (the default) runs at that moment, and sets its edit of the newer path it was just given.
    @Test func aValueSetRightAfterADropIsAnEditOfTheNewerPath() throws {
        var daemon = Daemon(values: [1, 2], version: 1, revision: 5)
        var state = try ready(daemon)
        let startsWriter = state.setFromBinding([1])
        #expect(startsWriter)
        let pop = try nextEdit(&state)
        daemon.change(to: [1, 2, 3])
        let dropped = try write(pop, &state, &daemon)
        #expect(Self.reported(dropped) == ["write_dropped", "[1, 2, 3]"])
        // The handler pushes 5 on the path it was told.
        _ = state.setFromBinding([1, 2, 3, 5])
        let push = try nextEdit(&state)
        #expect(push.popped.isEmpty && push.pushedRoutes == [5], "kept \(Self.values(push.kept))")
        _ = try write(push, &state, &daemon)
        #expect(daemon.values == [1, 2, 3, 5])
    }
}
