import NIOCore
import SceneSyncCore
import SceneSyncTestKit
import Testing

@testable import SceneSyncDaemon

/// Another host's batch on the real engine (``EngineHarness``): what each change's outcome tells the replicator,
/// which records a scene as holding a version only for `applied` and `unchanged`.
@Suite struct RemoteBatchOutcomeTests {
    /// Two changes of one batch to one scene, the second equal to the first: when the scene's write fails, neither
    /// was made, and the second is refused too, not `unchanged` (the scene never held it).
    @Test func aChangeUnchangedOnlyOnTopOfAFailedOneIsRefusedToo() async throws {
        let outcomes = try await onThreadOfItsOwn(named: "remote batch") { () throws -> [RemoteOutcome] in
            let harness = try EngineHarness()
            defer { harness.close() }
            guard let scene = SceneID("s0") else { return [] }
            let change = RemoteChange(
                scene: scene, fileBytes: Array(#"["T.V","1"]"#.utf8), format: .codable,
                origin: Origin(source: .remote, host: "b"), conflict: nil)
            harness.faults.failNextWrite(of: scene)
            let answered = HarnessMailbox<[RemoteOutcome]>()
            let promise = harness.loop.makePromise(of: [RemoteOutcome].self)
            promise.futureResult.whenSuccess { answered.post($0) }
            harness.send(.remoteBatch([change, change], promise))
            harness.drainEverything()
            #expect(harness.core.store.scene(scene) == nil)
            return answered.takeAll().first ?? []
        }
        #expect(outcomes.count == 2)
        for outcome in outcomes {
            guard case .refused = outcome else {
                Issue.record("expected both changes refused, got \(outcomes)")
                return
            }
        }
    }
}
